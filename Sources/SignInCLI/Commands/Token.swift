import SignInKit

/// `signin token`: only the access token on standard output, refreshed first when needed.
struct Token: SignInCommand {
    /// Whether the static half of the release build runs this to its end: not a forced refresh, which needs libcurl
    /// (unless a forwarded agent answers it).
    let startsStatic: Bool
    static let spec = CommandSpec(
        of: Self.self, options: Freshness.options + Impersonation.options + [.json] + TokenTarget.options, summary: "Print a fresh access token (refreshes only when needed)",
        details: """
            Prints only the access token on standard output, refreshed first when it expires within --min-ttl
            seconds. No network when the stored one is fresh enough. Parallel calls share one refresh. With
            --impersonate-service-account (or impersonate_service_account), the service account's token instead,
            minted with yours through the IAM Service Account Credentials API and kept encrypted until it expires.
            With --resource, a token for that API alone (RFC 8707: one of the configuration's resources, asked for
            at sign-in); with --audience, your token exchanged for one meant for that audience (RFC 8693). Each is
            kept encrypted until it expires; a resource or audience the provider refuses exits 7.
            """,
        takesAccount: true)

    let freshness: Freshness
    let chain: [String]?
    let json: Bool
    let target: TokenTarget

    init(_ a: Arguments, _ env: [String: String]) throws(UsageError) {
        freshness = try Freshness(a)
        startsStatic = freshness.startsStatic(a, env)
        chain = Impersonation(a).chain
        json = a.has(.json)
        target = TokenTarget(a)
    }

    func run(_ r: CommandRun) throws -> ExitCode {
        if !startsStatic { r.handOver(Freshness.handOverReason) }
        if let agent = r.agent, let answered = try run(through: agent) { return answered }
        return try run(in: r.context(resource: target.signInResource))
    }

    func run(through agent: AgentTokens) throws(SignInError) -> ExitCode? { try serve(agent.impersonating(chain)) }

    func run(in c: Context) throws(SignInError) -> ExitCode {
        try serve(LocalTokens(c: c, chain: chain, interactive: false))
    }

    private func serve(_ source: some TokenSource) throws(SignInError) -> ExitCode { try answer(source).write(source.io) }

    /// What the command prints for `source`'s token: the token alone, or with `--json` its expiry and subject.
    func answer(_ source: some TokenSource) throws(SignInError) -> BridgeAnswer {
        let issued = try source.token(.access, freshness, for: target)
        let (type, value) = try issued.presented(to: .typed)
        // Said, not refused: the token works, but it is the grant's whole reach, not the one API's.
        let notice = issued.evidentlyUnrestricted
            ? "signin: warning: the provider answered a token for \(issued.resource ?? "the API") that is not restricted to it (the grant's own token, or one whose audience names another): it ignores resource indicators (RFC 8707), so this token reaches every API the sign-in does"
            : nil
        guard json else { return BridgeAnswer(output: value + "\n", error: notice) }
        var fields: [String: JSONValueOut] = ["access_token": .string(value), "expires_at": issued.token.expirationDate.map { .string(iso8601($0)) } ?? .null,
                                              "token_type": .string(type), "sub": .string(issued.subject)]
        if let r = issued.resource { fields["resource"] = .string(r) }
        if let a = issued.audience { fields["audience"] = .string(a) }
        if issued.evidentlyUnrestricted { fields["restricted"] = .bool(false) }
        return BridgeAnswer(output: JSONText.object(fields) + "\n", error: notice)
    }
}
