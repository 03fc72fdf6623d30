import SignInKit

/// `signin dpop-proof --method M --url U`: a DPoP proof (RFC 9449) for one request presenting the access token
/// `signin token` prints, for a grant bound to this machine's key. The private key never leaves signin.
struct DPoPProofCommand: SignInCommand {
    static let methodOption = OptionSpec("--method", value: "METHOD", "The request's HTTP method (default GET)")
    static let urlOption = OptionSpec("--url", value: "URL", "The request's URL (query and fragment are left out of the proof)")
    static let spec = CommandSpec(
        of: Self.self, options: MinimumValidity.options + [DPoPProofCommand.methodOption, DPoPProofCommand.urlOption], summary: "Print a DPoP proof for one request with the access token (DPoP-bound grants)",
        details: """
            For a grant bound to this machine's key with DPoP (RFC 9449; `dpop` in the configuration, used where the
            provider offers it), prints a proof for one request: send it as the `DPoP` header, with
            `Authorization: DPoP <token>` and the token `signin token` prints (the proof names that token, so take
            both with the same --min-ttl). One proof per request. Exit 2 when the grant is a bearer grant: no proof
            is needed there, and the token_type of `signin token --json` says Bearer.
            """,
        takesAccount: true)

    let target: TokenRequest.DPoPTarget
    let freshness: Freshness

    init(_ a: Arguments, _ env: [String: String]) throws(UsageError) {
        freshness = Freshness(minTTL: try MinimumValidity(a).seconds)
        let method = a.value(Self.methodOption)
        guard let url = a.value(Self.urlOption) else { throw UsageError("usage: signin dpop-proof --url https://... [--method GET]") }
        target = TokenRequest.DPoPTarget(method: method ?? "GET", url: url)
        if let problem = target.problem { throw UsageError("signin dpop-proof: \(problem)") }
    }

    func run(_ r: CommandRun) throws -> ExitCode {
        if let agent = r.agent, let answered = try run(through: agent) { return answered }
        return try run(in: r.context())
    }

    /// Through a forwarded agent: the laptop signs (the key never crosses).
    func run(through agent: AgentTokens) throws(SignInError) -> ExitCode? { try serve(agent, settings: "the laptop's configuration", agent.io) }

    func run(in c: Context) throws(SignInError) -> ExitCode {
        try serve(LocalTokens(c: c, chain: [], interactive: false), settings: c.client.configuration.sourcePath, c.io)
    }

    private func serve(_ source: some TokenSource, settings: String, _ io: IOStreams) throws(SignInError) -> ExitCode {
        guard let proof = try source.accessToken(freshness, proofFor: target).dpopProof else {
            throw .unsupported(reason: "this account's grant is not bound to a key (its tokens are bearer tokens: no DPoP proof is needed). `dpop` in \(settings) and the provider's discovery decide it at sign-in")
        }
        io.out(proof)
        return .success
    }
}
