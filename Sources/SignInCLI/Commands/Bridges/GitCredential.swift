import FoundationEssentials
import SignInKit

#if canImport(Glibc)
import Glibc
#endif

/// `signin git-credential get|store|erase`: git's credential-helper protocol.
struct GitCredential: SignInCommand {
    static let usernameOption = OptionSpec("--username", value: "NAME", "The user name to answer (default: the account's e-mail)")
    static let spec = CommandSpec(
        of: Self.self, options: MinimumValidity.options + [GitCredential.usernameOption], summary: "git credential helper: answer git with a fresh token as the password",
        details: """
            Speaks git's credential-helper protocol on standard input and output. `get` answers username= and
            password= (a fresh access token) and password_expiry_utc; `erase` (git reports the password was
            rejected) makes the next `get` refresh first; `store` does nothing. `get` answers only the hosts in
            git_hosts (Google's source hosts by default for Google) and plain http only to this machine.
            Configure with (the empty line first keeps other helpers from storing the token)
              git config --global credential.https://HOST.helper ''
              git config --global --add credential.https://HOST.helper '!signin git-credential'
            """,
        usageTail: " get|store|erase", positionalWords: ["get", "store", "erase"], takesAccount: true, takesJSON: false, takesArguments: true)

    let operation: String
    let username: String?
    let minTTL: Int

    init(_ a: Arguments, _ env: [String: String]) throws(UsageError) {
        minTTL = try MinimumValidity(a).seconds
        username = a.value(Self.usernameOption)
        guard a.positional.count == 1, ["get", "store", "erase"].contains(a.positional[0]) else {
            throw UsageError("`signin git-credential` takes one of get, store, erase (git calls it so)")
        }
        operation = a.positional[0]
    }

    func run(_ r: CommandRun) throws -> ExitCode {
        if let agent = r.agent, let answered = try run(through: agent) { return answered }
        return try run(in: r.context())
    }

    /// git's credential-helper protocol (gitcredentials(7)): attributes on standard input until a blank line;
    /// `get` answers username and password (a fresh access token) and the token's expiry; `erase` (git says the
    /// password was refused) makes the next `get` refresh first; `store` does nothing (signin keeps its own).
    func run(in c: Context) throws(SignInError) -> ExitCode { try serve(LocalTokens(c: c, chain: [], interactive: false)) }

    func run(through agent: AgentTokens) throws(SignInError) -> ExitCode? { try serve(agent) }

    private func serve(_ source: some BridgeSource) throws(SignInError) -> ExitCode {
        var lines: [String] = []
        while let line = readLine(), !line.isEmpty { lines.append(line) }
        return try answer(lines, source).write(source.io)
    }

    /// The protocol, apart from standard input and output (so it has unit tests with a stand-in source): the
    /// attribute lines git sent, and what to answer.
    func answer(_ lines: [String], _ source: some BridgeSource) throws(SignInError) -> BridgeAnswer {
        var attributes: [String: String] = [:]
        for line in lines {
            guard let eq = line.firstIndex(of: "=") else { continue }
            attributes[String(line[..<eq])] = String(line[line.index(after: eq)...])
        }
        switch operation {
        case "get":
            // The token goes only to the hosts the configuration names, and over plain http only to this machine.
            let host = attributes["host"] ?? ""
            let patterns = source.gitHosts()
            guard GitHosts.allows(host, patterns: patterns) else {
                return BridgeAnswer(code: .usage, error: "signin: git-credential gives no token to \"\(host.withoutControlCharacters)\": it is not in git_hosts of \(source.settingsName) (" +
                    (patterns.isEmpty ? "none is allowed" : "allowed: " + patterns.joined(separator: ", ")) + "). To allow it, add \"git_hosts\": [\"\(host.withoutControlCharacters)\"] there.")
            }
            if attributes["protocol"] == "http" && !GitHosts.isLoopback(host) {
                return BridgeAnswer(code: .usage, error: "signin: git-credential gives no token over plain http to \"\(host.withoutControlCharacters)\" (anyone on the way could read it); use https.")
            }
            // A host given an API of its own (`git_resources`) gets the token for that API alone (RFC 8707); any
            // other, the grant's own (a target with no resource).
            let api = TokenTarget(resource: GitHosts.resource(for: host, in: source.gitResources()))
            let issued = try source.token(.access, Freshness(minTTL: minTTL), for: api)
            let token = issued.token
            let username = self.username ?? source.gitUsername ?? issued.name
            var answer = "username=\(username.withoutControlCharacters)\npassword=\(try issued.presented(to: .bearerOnly("git (a password)")).value)\n"
            if let exp = token.expirationDate { answer += "password_expiry_utc=\(Int(exp.timeIntervalSince1970))\n" }
            return BridgeAnswer(output: answer)
        case "erase":
            if let rejected = attributes["password"] { try source.markRejected(rejected) }
        default:
            break  // store: the credentials live in signin's own store
        }
        return BridgeAnswer()
    }
}
