import SignInKit

/// `signin id-token`: only the ID token, refreshed first when needed; `--json` adds its expiry and claims.
struct IDTokenCommand: SignInCommand {
    static let audienceOption = OptionSpec("--audience", value: "AUDIENCE", check: .nonEmpty(what: "the service the token is for"), "Whom the token is for (a service's URL or client ID; needs a service account unless it is this client)")
    /// Whether the static half of the release build runs this to its end: not a forced refresh, which needs libcurl
    /// (unless a forwarded agent answers it).
    let startsStatic: Bool
    static let spec = CommandSpec(
        of: Self.self, options: Freshness.options + Impersonation.options + [IDTokenCommand.audienceOption, .json], summary: "Print a fresh OpenID Connect ID token (as gcloud auth print-identity-token)",
        details: """
            Prints only the ID token, refreshed first when it expires within --min-ttl seconds. A provider that
            sends no new ID token on refresh is an error that says so. --json adds its expiry and claims. With
            --impersonate-service-account and --audience, the service account's ID token for that audience
            (Cloud Run, IAP), minted through the IAM Service Account Credentials API.
            """,
        takesAccount: true)

    let freshness: Freshness
    let chain: [String]?
    let audience: String?

    init(_ a: Arguments, _ env: [String: String]) throws(UsageError) {
        freshness = try Freshness(a)
        startsStatic = freshness.startsStatic(a, env)
        chain = Impersonation(a).chain
        audience = a.value(Self.audienceOption)
        json = a.has(.json)
    }

    let json: Bool

    func run(_ r: CommandRun) throws -> ExitCode {
        if !startsStatic { r.handOver(Freshness.handOverReason) }
        if let agent = r.agent, let answered = try run(through: agent) { return answered }
        return try run(in: r.context())
    }

    func run(through agent: AgentTokens) throws(SignInError) -> ExitCode? { try serve(agent.impersonating(chain)) }

    func run(in c: Context) throws(SignInError) -> ExitCode {
        try serve(LocalTokens(c: c, chain: chain, interactive: false))
    }

    private func serve(_ source: some TokenSource) throws(SignInError) -> ExitCode { try answer(source).write(source.io) }

    /// What the command prints for `source`'s ID token: the token alone, or with `--json` its expiry and claims.
    func answer(_ source: some TokenSource) throws(SignInError) -> BridgeAnswer {
        let token = try source.token(.id, freshness, for: TokenTarget(audience: audience)).token
        guard json else { return BridgeAnswer(output: token.value + "\n") }
        return BridgeAnswer(output: JSONText.object(["id_token": .string(token.value), "expires_at": token.expirationDate.map { .string(iso8601($0)) } ?? .null,
                                                     "claims": JSONText.claims(of: token.value)]) + "\n")
    }
}
