import FoundationEssentials
import SignInKit

#if canImport(Glibc)
import Glibc
#endif

/// `signin status`: an offline summary of one account: who, token expiry, granted scopes, where its key and file are.
struct Status: SignInCommand {
    static let spec = CommandSpec(
        of: Self.self, options: AccountReading.options, summary: "Offline summary: who, token expiry, granted scopes, where the store is",
        details: "Offline summary of one account: signed in or not, token expiry, granted scopes, where its key and file are.\nExits 3 when not signed in.",
        takesAccount: true)

    let reading: AccountReading
    var json: Bool { reading.json }

    init(_ a: Arguments, _ env: [String: String]) throws(UsageError) { reading = AccountReading(a) }

    func run(_ r: CommandRun) throws -> ExitCode { try reading.run(r, forwarded: run(through:), local: run(in:)) }

    /// Through a forwarded agent: the session, its accounts and its limits.
    func run(through agent: AgentTokens) throws(SignInError) -> ExitCode? { try ForwardedAgent.status(agent, json: json) }

    func run(in c: Context) throws(SignInError) -> ExitCode {
        let io = c.io
        let client = c.client
        let store = client.fileStore.directory
        let user: SignInUser?
        do throws(SignInError) {
            user = try client.storedUser(account: c.account)
        } catch .storeUnreadable(let path, let reason) {
            // The store cannot be opened now (a TPM in lockout, unreachable or full; a passphrase not given): what
            // can be told without opening it is still told, and the reason, with exit 1 as any unreadable store.
            if c.json {
                let key = client.fileStore.keyLocation
                io.out(JSONText.object(["signed_in": .null, "issuer": .string(client.configuration.issuer), "client_id": .string(client.configuration.clientID),
                                     "store": .string(store), "key_storage": .string(key.storage), "key_path": key.path.map { .string($0) } ?? .null,
                                     "configuration": .string(client.configuration.sourcePath), "error": .string(SignInError.storeUnreadable(path: path, reason: reason).description)]))
            } else {
                io.out(["Store: \(store) (cannot be opened now)", "Key: \(client.fileStore.keyDescription)", "Configuration: \(client.configuration.sourcePath)"].joined(separator: "\n"))
            }
            throw .storeUnreadable(path: path, reason: reason)
        }
        if c.json {
            var obj: [String: JSONValueOut] = user.map { JSONText.user($0) } ?? [
                "signed_in": .bool(false), "issuer": .string(client.configuration.issuer),
            ]
            obj["client_id"] = .string(client.configuration.clientID)
            obj["client_kind"] = .string(client.configuration.clientKind.rawValue)
            obj["store"] = .string(store)
            let key = client.fileStore.keyLocation
            obj["key_storage"] = .string(key.storage)
            obj["key_path"] = key.path.map { .string($0) } ?? .null
            obj["key_cache_seconds"] = .int(key.cacheSeconds)
            obj["configuration"] = .string(client.configuration.sourcePath)
            obj["dpop_key"] = user?.proofKeyCustody.map { .string($0) } ?? .null
            io.out(JSONText.object(obj))
        } else if let user, let ended = user.grantEndedAt {
            io.out("Signed out by the provider: \(user.profile.displayName)\nThe provider ended this sign-in on \(iso8601(ended)); run `signin login`.\nStore: \(store)")
            return .notSignedIn
        } else if let user {
            var lines = [(user.identity == .none ? "Signed in to \(user.accountLine)" : "Signed in as \(user.accountLine)") + (user.isCurrent ? "" : " (not the current account)"),
                         "Issuer: \(client.configuration.issuer)"]
            if let api = client.configuration.grantAPI { lines.append("API: \(api.withoutControlCharacters)") }
            switch client.configuration.clientKind {
            case .configured: break
            case .registered: lines.append("Client: \(client.configuration.clientID.withoutControlCharacters), registered by signin at the server (RFC 7591)")
            case .metadataDocument: lines.append("Client: the client ID metadata document at \(client.configuration.clientID.withoutControlCharacters)")
            }
            switch user.identity {
            case .idToken: break
            case .profileEndpoint: lines.append("Identity: from the server's profile endpoint (no ID token)")
            case .none: lines.append("Identity: none (the server gives no identity: the account is named by its API)")
            }
            if user.accessTokenRejected {
                lines.append("Access token: rejected by an API (a refresh happens on the next `signin token`)")
            } else if let exp = user.accessToken?.expirationDate {
                let left = Int(exp.timeIntervalSinceNow)
                lines.append("Access token: " + (left > 0 ? "valid for \(left / 60) min \(left % 60) s (until \(iso8601(exp)))" : "expired (a refresh happens on the next `signin token`)"))
            }
            var refresh = user.refreshToken != nil ? "stored" : "none"
            switch user.proofKeyCustody {
            case "tpm"?: refresh += ", bound to a key inside this machine's TPM (DPoP): a copy is useless elsewhere"
            case "store"?: refresh += ", bound to a key kept with it in the store (DPoP): a copy without the key is useless"
            default: break
            }
            lines.append("Refresh token: " + refresh)
            lines.append("Granted scopes: \(user.grantedScopes.joined(separator: " ").withoutControlCharacters)")
            // MCP servers reached through the enterprise sign-in: each server's token, bought with this sign-in.
            for t in ((try? client.credentials(account: user.userID)) ?? nil).map(EnterpriseFamily.keptTokens) ?? [] {
                let state = t.expiry > Date() ? "until \(iso8601(t.expiry))" : "expired (a new exchange happens when it is asked for)"
                lines.append("MCP server \(t.server.withoutControlCharacters) (enterprise sign-in): token \(state)")
            }
            lines.append("Store: \(store)")
            lines.append("Key: \(client.fileStore.keyDescription)")
            lines.append("Configuration: \(client.configuration.sourcePath)")
            io.out(lines.joined(separator: "\n"))
        } else {
            io.out("Not signed in (issuer \(client.configuration.issuer)).\nStore: \(store)")
            if let others = try? client.accounts(), !others.isEmpty {
                io.out("\(others.count) account(s) stored, none current: `signin use ACCOUNT` to choose one.")
            }
        }
        return user == nil || user?.grantEndedAt != nil ? .notSignedIn : .success
    }
}
