import FoundationEssentials
import SignInKit

#if canImport(Glibc)
import Glibc
#endif

/// `signin accounts [--all]`: the accounts of this configuration (or of every configuration), the current one marked.
struct AccountsCommand: SignInCommand {
    static let allOption = OptionSpec("--all", "Every configuration's accounts")
    static let spec = CommandSpec(
        of: Self.self, options: [AccountsCommand.allOption, .config, .profile, .json], summary: "List the signed-in accounts, the current one marked",
        details: "Lists the accounts of this configuration (--all: of every configuration), the current one marked with *,\neach with e-mail, name, access-token expiry and whether the provider still accepted its grant at the last refresh.")

    let all: Bool
    let json: Bool

    init(_ a: Arguments, _ env: [String: String]) throws(UsageError) {
        all = a.has(Self.allOption)
        json = a.has(.json)
    }

    func run(_ r: CommandRun) throws -> ExitCode {
        if let agent = r.agent, let answered = try run(through: agent) { return answered }
        if let answered = runEverywhere(r.session, r.io) { return answered }
        return try run(in: r.context())
    }

    /// `--all`, or no configuration named and none at the default place: every configuration's accounts (the same
    /// answer either way: "no configurations yet" is not an error), the one the session would use marked.
    func runEverywhere(_ session: SignInSession, _ io: IOStreams) -> ExitCode? {
        if all || (!session.configurationNamed && Posix.access(session.configurationPath, F_OK) != 0) {
            return Self.everywhere(json: json, session.environment, inUse: session.configurationPath, io)
        }
        return nil
    }

    /// Through a forwarded agent: the accounts it forwards.
    func run(through agent: AgentTokens) throws(SignInError) -> ExitCode? { try ForwardedAgent.accounts(agent, json: json) }

    func run(in c: Context) throws(SignInError) -> ExitCode {
        let io = c.io
        let users = try c.client.accounts()
        if c.json {
            io.out(JSONText.render(.array(users.map { .object(JSONText.user($0)) })))
        } else if users.isEmpty {
            io.out("No accounts for \(c.client.configuration.issuer) (\(c.client.configuration.sourcePath)); run `signin login`.")
        } else {
            var lines: [String] = []
            for (user, line) in zip(users, Self.accountLines(users)) {
                lines.append(line)
                lines += Self.enterpriseTokenLines(c.client, user)
            }
            io.out(lines.joined(separator: "\n"))
        }
        return .success
    }

    /// `underAPI`: the lines sit under the API's own heading, which names it: an account the server gives no identity
    /// for is "signed in" there, not the API's address again.
    static func accountLines(_ users: [SignInUser], underAPI: Bool = false) -> [String] {
        func id(_ u: SignInUser) -> String {
            (u.identity == .none ? (underAPI ? "signed in (the server gives no identity)" : u.accountLine) : u.profile.email ?? u.userID).withoutControlCharacters
        }
        let width = users.map { id($0).count }.max() ?? 0
        return users.map { u in
            let id = id(u)
            let name = (u.profile.name ?? "").withoutControlCharacters
            var state: String
            if let ended = u.grantEndedAt {
                state = "ended by the provider on \(iso8601(ended))"
            } else if u.accessTokenRejected {
                state = "token rejected by an API (refreshes when used)"
            } else if let exp = u.accessToken?.expirationDate {
                state = exp > Date() ? "token until \(iso8601(exp))" : "token expired (refreshes when used)"
                if u.refreshToken == nil { state += ", no refresh token" }
            } else {
                state = "no access token"
            }
            return "\(u.isCurrent ? "*" : " ") \(id.padding(to: width))  \(name.isEmpty ? "" : name + "  ")\(state)"
        }
    }

    /// The MCP servers' tokens an account's enterprise sign-in bought (MCP's enterprise-managed authorization), a
    /// line each under the account, with its expiry.
    static func enterpriseTokenLines(_ client: SignInClient, _ user: SignInUser) -> [String] {
        guard client.configuration.enterpriseAuthorization.isEnabled else { return [] }
        let kept = ((try? client.credentials(account: user.userID)) ?? nil).map(EnterpriseFamily.keptTokens) ?? []
        return kept.map { t in
            "    MCP server \(t.server.withoutControlCharacters): " + (t.expiry > Date() ? "token until \(iso8601(t.expiry))" : "token expired (a new exchange when asked)")
        }
    }

    /// `signin accounts --all`: every named configuration and its accounts.
    /// The configuration in use (`inUse`) is listed too when it lives outside the configuration folder
    /// (`-c FILE`, `$SIGNIN_CONFIG`), by its path.
    static func everywhere(json asJSON: Bool, _ env: [String: String], inUse: String? = nil, _ io: IOStreams) -> ExitCode {
        var sections: [String] = []
        var json: [JSONValueOut] = []
        let folder = SignInConfiguration.directory(environment: env)
        var listed = SignInConfiguration.profileNames(environment: env).map { (name: $0, path: folder + "/\($0).json") }
        if let inUse, !listed.contains(where: { $0.path == inUse }), Posix.access(inUse, F_OK) == 0 { listed.insert((inUse, inUse), at: 0) }
        for (name, path) in listed {
            guard let config = try? SignInConfiguration.load(path: path) else {
                sections.append("\(name) (\(path)): cannot be read; `signin status \(name == path ? "-c" : "--profile") \(name)` says why")
                continue
            }
            let client = SignInClient(configuration: config, environment: env, onEvent: { if case .notice(let text) = $0 { io.err("signin: \(text)") } })
            let users = (try? client.accounts()) ?? []
            sections.append("\(name) (\(config.issuer)):\n" + (users.isEmpty ? "  no accounts" : accountLines(users).map { "  " + $0 }.joined(separator: "\n")))
            for u in users {
                var o = JSONText.user(u)
                if name == path { o["configuration"] = .string(path) } else { o["profile_name"] = .string(name) }
                json.append(.object(o))
            }
        }
        // The APIs signed in to from their address alone (`login --resource URL`), each a sign-in of its own.
        let store = CredentialStore.defaultDirectory(environment: env)
        for resource in (try? CredentialStore(directory: store).apiResources()) ?? [] {
            guard let config = APIAccess.knownConfiguration(for: resource, storeDirectory: store) else { continue }
            let client = SignInClient(configuration: config, environment: env, onEvent: { if case .notice(let text) = $0 { io.err("signin: \(text)") } })
            let users = (try? client.accounts()) ?? []
            guard !users.isEmpty else { continue }
            sections.append("the API \(resource.withoutControlCharacters) (signed in at \(config.issuer.withoutControlCharacters); name it with --resource):\n"
                            + accountLines(users, underAPI: true).map { "  " + $0 }.joined(separator: "\n"))
            for u in users {
                var o = JSONText.user(u)
                o["resource"] = .string(resource)
                json.append(.object(o))
            }
        }
        if asJSON { io.out(JSONText.render(.array(json))) } else {
            io.out(sections.isEmpty ? "Nothing signed in: no configurations in \(SignInConfiguration.directory(environment: env)) (`signin init` writes one for your provider), and no API or MCP server signed in to from its address (`signin login --resource URL`, or `signin mcp URL` from an MCP client)." : sections.joined(separator: "\n"))
        }
        return .success
    }
}
