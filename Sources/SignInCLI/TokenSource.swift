import SignInKit

/// Where the token commands and the bridges get their tokens: this machine's store (through the library's one
/// token path, `SignInClient.token`), or, on a machine reached with `signin ssh`, the forwarded agent
/// (`SIGNIN_AGENT_SOCK`), with no configuration and no store there. Both answer the same `TokenRequest`.
protocol TokenSource {
    /// Where the command's text goes.
    var io: IOStreams { get }
    /// The token of `kind` a command asks for, as fresh as `freshness` asks: with `target` set, an access token for
    /// that one API (`--resource`, `--audience`), or an ID token for `target.audience` (`id-token --audience`);
    /// else the grant's own token of `kind`. The source adds its account and service-account chain; the request
    /// carries all of it, and the one token path decides (`TokenUseCase`).
    func token(_ kind: TokenKind, _ freshness: Freshness, for target: TokenTarget) throws(SignInError) -> IssuedToken
    /// The access token with a DPoP proof for `target` when the grant is bound to a key (`IssuedToken.dpopProof`;
    /// nil for a bearer token).
    func accessToken(_ freshness: Freshness, proofFor target: TokenRequest.DPoPTarget) throws(SignInError) -> IssuedToken
    /// An API refused `token`: the next one comes from a refresh.
    func markRejected(_ token: String) throws(SignInError)
}

/// What the bridges ask of a source beside its tokens, from its configuration (this machine's, or the laptop's
/// through the agent): the git hosts and docker registries they answer, and an AWS role's credentials (AWS's family).
protocol BridgeSource: TokenSource {
    /// The hosts `git-credential` answers and the registries `docker-credential` answers.
    func gitHosts() -> [String]
    func dockerRegistries() -> [String]
    /// The resource each git host pattern is given a token for (`git_resources`).
    func gitResources() -> [String: String]
    /// Where those lists come from, for a refusal's message.
    var settingsName: String { get }
    /// The user name `git-credential` answers, when the configuration names one.
    var gitUsername: String? { get }
    /// An AWS role's credentials bought with the person's ID token.
    func awsCredentials(_ request: AWSRoleRequest) throws(SignInError) -> AWSCredentials
}

extension BridgeSource {
    /// A stand-in: no host has a resource of its own.
    func gitResources() -> [String: String] { [:] }
}

extension TokenSource {
    /// A source with no DPoP-bound grant (a stand-in): the token, and no proof.
    func accessToken(_ freshness: Freshness, proofFor target: TokenRequest.DPoPTarget) throws(SignInError) -> IssuedToken {
        try token(.access, freshness)
    }

    /// The grant's own token of `kind` (no target).
    func token(_ kind: TokenKind, _ freshness: Freshness) throws(SignInError) -> IssuedToken {
        try token(kind, freshness, for: TokenTarget())
    }
}

extension Freshness {
    /// The request of `kind` for `target` (`--resource` and `--audience` for an access token; `audience` for an ID
    /// token), `account` and `principal`, with this freshness.
    func request(_ kind: TokenKind, _ target: TokenTarget, principal: TokenRequest.Principal, account: String?) -> TokenRequest {
        var r = TokenRequest(kind: kind, audience: target.audience, minimumValidity: .seconds(minTTL), forceRefresh: forceRefresh, account: account)
        r.resource = target.resource
        r.principal = principal
        return r
    }
}

/// Tokens from this machine's store, the person's or (with a chain) a service account's.
struct LocalTokens: BridgeSource {
    let c: Context
    var io: IOStreams { c.io }
    /// Whose tokens: the one token path resolves `.configured` against the configuration.
    let principal: TokenRequest.Principal
    /// Sign in through the browser first when nobody is (`exec --login`, kubectl's interactive exec).
    let interactive: Bool

    /// `chain`: the command line's `--impersonate-service-account` (nil: as the configuration says; empty: the person).
    init(c: Context, chain: [String]?, interactive: Bool) {
        self.c = c
        self.principal = TokenRequest.Principal(given: chain)
        self.interactive = interactive
    }

    /// 1. The library's token path answers (`SignInClient.token`).
    /// 2. Not signed in (exit 3): with `interactive`, say so on standard error, sign in through the browser, and ask
    ///    again (no refresh forced: the sign-in's tokens are new); otherwise throw, so a script is never stopped by
    ///    a browser.
    func token(_ kind: TokenKind, _ freshness: Freshness, for target: TokenTarget) throws(SignInError) -> IssuedToken {
        try answer(freshness.request(kind, target, principal: principal, account: c.account))
    }

    private func answer(_ r: TokenRequest) throws(SignInError) -> IssuedToken {
        do {
            return try c.client.token(r)
        } catch .noPreviousSignIn(let reason) {
            guard interactive else { throw .noPreviousSignIn(reason: reason) }
            c.io.err("signin: signing in is needed first (\(reason.description.withoutControlCharacters)).")
            var opts = SignInOptions()
            opts.openBrowser = !c.browsing.headless
            opts.loginHint = c.account
            _ = try Login.signIn(c.client, opts)
            var again = r
            again.forceRefresh = false
            return try c.client.token(again)
        }
    }

    func accessToken(_ freshness: Freshness, proofFor target: TokenRequest.DPoPTarget) throws(SignInError) -> IssuedToken {
        var r = freshness.request(.access, TokenTarget(), principal: principal, account: c.account)
        r.proofFor = target
        return try c.client.token(r)
    }

    func markRejected(_ token: String) throws(SignInError) { try c.client.markAccessTokenRejected(token, account: c.account) }
    func gitHosts() -> [String] { GitHosts.patterns(for: c.client.configuration) }
    func gitResources() -> [String: String] { c.client.configuration.gitResources }
    func dockerRegistries() -> [String] { DockerRegistries.patterns(for: c.client.configuration) }
    var settingsName: String { c.client.configuration.sourcePath }
    var gitUsername: String? { c.client.configuration.gitUsername }
    func awsCredentials(_ request: AWSRoleRequest) throws(SignInError) -> AWSCredentials { try c.client.awsCredentials(request) }
}

/// Tokens from a forwarded agent: what the laptop's `signin ssh` allowed, nothing else; never a browser. The
/// request crosses as it is, so the laptop answers it as `signin token` would there (or refuses it).
final class AgentTokens: BridgeSource {
    let agent: AgentClient
    let account: String?
    /// Where the command's text goes.
    let io: IOStreams
    /// The service-account chain asked for on this command line (no configuration here names one).
    private(set) var chain: [String] = []
    private var helloAnswer: AgentProtocol.Hello?

    init(agent: AgentClient, account: String?, io: IOStreams = .standard) {
        self.agent = agent
        self.io = io
        self.account = account
    }

    /// This source, asking for the service account `given` names (nil: the person's own tokens).
    /// Whether the socket is this environment's own agent (`SIGNIN_AGENT_SOCK` from `signin agent` on this very
    /// machine), where the store is here: the commands that act on the grant then run as usual.
    var isOwnAgent: Bool { agent.socketPath == AgentProtocol.socketPath(environment: ProcessEnvironment.current) }

    func impersonating(_ given: [String]?) -> AgentTokens {
        chain = given ?? []
        configuredChain = given == nil
        return self
    }

    /// No chain on this command line: the laptop's configuration decides the principal, as it does there.
    private(set) var configuredChain = false

    /// Whose tokens: the laptop's configuration's principal, or the chain on this command line.
    private var principal: TokenRequest.Principal { configuredChain ? .configured : .init(given: chain) }

    func token(_ kind: TokenKind, _ freshness: Freshness, for target: TokenTarget) throws(SignInError) -> IssuedToken {
        try agent.token(freshness.request(kind, target, principal: principal, account: account))
    }

    func accessToken(_ freshness: Freshness, proofFor target: TokenRequest.DPoPTarget) throws(SignInError) -> IssuedToken {
        var r = freshness.request(.access, TokenTarget(), principal: principal, account: account)
        r.proofFor = target
        return try agent.token(r)
    }

    func markRejected(_ token: String) throws(SignInError) { try agent.rejected(token) }

    /// The agent's hello (asked once per run): its session's limits and the hosts its configuration allows.
    func hello() throws(SignInError) -> AgentProtocol.Hello {
        if let helloAnswer { return helloAnswer }
        let h = try agent.greeting()
        helloAnswer = h
        return h
    }

    func gitHosts() -> [String] { (try? hello())?.gitHosts ?? [] }
    func gitResources() -> [String: String] { (try? hello())?.gitResources ?? [:] }
    func dockerRegistries() -> [String] { (try? hello())?.dockerRegistries ?? [] }

    /// The role's credentials by the library's one AWS rule, with the laptop's ID token (`AgentClient.awsCredentials`).
    func awsCredentials(_ request: AWSRoleRequest) throws(SignInError) -> AWSCredentials {
        try agent.awsCredentials(request, account: account)
    }
    var settingsName: String { "the laptop's configuration (through the agent at \(agent.socketPath))" }
    var gitUsername: String? { nil }
}
