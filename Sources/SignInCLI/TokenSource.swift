@_spi(CLI) import SignInKit

/// Where the token commands and the bridges get their tokens: this machine's store (through the client), or, on
/// a machine reached with `signin ssh`, the forwarded agent (`SIGNIN_AGENT_SOCK`), with no configuration and no
/// store there.
protocol TokenSource {
    /// A fresh token of `kind`, and whom it is for.
    func token(_ kind: TokenKind, _ freshness: Freshness, audience: String?) throws(SignInError) -> IssuedToken
    /// An API refused `token`: the next one comes from a refresh.
    func markRejected(_ token: String) throws(SignInError)
    /// The hosts `git-credential` answers and the registries `docker-credential` answers.
    func gitHosts() -> [String]
    func dockerRegistries() -> [String]
    /// Where those lists come from, for a refusal's message.
    var settingsName: String { get }
    /// The user name `git-credential` answers, when the configuration names one.
    var gitUsername: String? { get }
}

/// A token and whom it is for: `subject` the account's `sub` (a service account: its e-mail), `name` its e-mail.
struct IssuedToken {
    let token: SignInToken
    let subject: String
    let name: String
}

/// Tokens from this machine's store, the person's or (with a chain) a service account's.
struct LocalTokens: TokenSource {
    let c: Context
    let chain: [String]
    let interactive: Bool

    func token(_ kind: TokenKind, _ freshness: Freshness, audience: String?) throws(SignInError) -> IssuedToken {
        let (t, user) = try Impersonation.token(c, freshness, kind: kind, chain: chain, audience: audience, interactive: interactive)
        guard let user else { return IssuedToken(token: t, subject: chain.last ?? "", name: chain.last ?? "") }
        return IssuedToken(token: t, subject: user.userID, name: user.profile.email ?? user.userID)
    }

    func markRejected(_ token: String) throws(SignInError) { try c.client.markAccessTokenRejected(token, account: c.account) }
    func gitHosts() -> [String] { GitHosts.patterns(for: c.client.configuration) }
    func dockerRegistries() -> [String] { DockerRegistries.patterns(for: c.client.configuration) }
    var settingsName: String { c.client.configuration.sourcePath }
    var gitUsername: String? { c.client.configuration.gitUsername }
}

/// Tokens from a forwarded agent: what the laptop's `signin ssh` allowed, nothing else; never a browser.
final class AgentTokens: TokenSource {
    let agent: AgentClient
    let account: String?
    private var helloAnswer: AgentClient.Answer?

    init(agent: AgentClient, account: String?) {
        self.agent = agent
        self.account = account
    }

    func token(_ kind: TokenKind, _ freshness: Freshness, audience: String?) throws(SignInError) -> IssuedToken {
        if audience != nil {
            throw .unsupported(reason: "an ID token for another audience is not handed out through a forwarded agent; ask for it on the machine that holds the grant")
        }
        let (t, who) = try agent.token(kind, account: account, minTTL: freshness.minTTL)
        return IssuedToken(token: t, subject: who, name: who)
    }

    func markRejected(_ token: String) throws(SignInError) { try agent.rejected(token) }

    private func hello() -> [String: JSONValue] {
        if helloAnswer == nil { helloAnswer = try? agent.hello() }
        return helloAnswer?.object ?? [:]
    }

    func gitHosts() -> [String] { hello()["git_hosts"]?.array?.compactMap(\.string) ?? [] }
    func dockerRegistries() -> [String] { hello()["docker_registries"]?.array?.compactMap(\.string) ?? [] }
    var settingsName: String { "the laptop's configuration (through the agent at \(agent.socketPath))" }
    var gitUsername: String? { nil }
}
