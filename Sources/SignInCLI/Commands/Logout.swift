import SignInKit

#if canImport(Glibc)
import Glibc
#endif

/// `signin logout [--revoke] [--account A | --all] [--yes]`: sign out, and with `--revoke` end the grant at the provider.
struct Logout: SignInCommand {
    static let revokeOption = OptionSpec("--revoke", "Also revoke the grant at the provider (RFC 7009)")
    static let allOption = OptionSpec("--all", "Every account of this configuration, and every API signed in to from its address")
    static let spec = CommandSpec(
        of: Self.self, options: [.config, .profile, Logout.revokeOption, Logout.allOption, .yes, TokenTarget.apiAccountOption], summary: "Sign out (remove the local credentials); --revoke also ends the grant at the provider",
        details: "Signs out the current account (or --account, or --all) and says which. On a terminal it asks first (--yes\nskips the question). Afterwards no account is current until `signin use` or `signin login`.",
        takesAccount: true)

    let revoke: Bool
    let all: Bool
    let yes: Bool
    /// `--resource URL`: the sign-in for that API.
    let apiResource: String?

    func run(_ r: CommandRun) throws -> ExitCode {
        if let agent = r.agent, let answered = try run(through: agent) { return answered }
        if let answered = signOutEveryAPI(r.session, r.io) { return answered }
        return try run(in: r.context(resource: apiResource))
    }

    /// Through a forwarded agent there is no grant here to act on: where to do it instead.
    func run(through agent: AgentTokens) throws(SignInError) -> ExitCode? { try ForwardedAgent.refuse(Self.name, agent) }

    /// `--all` with no configuration at all (none named, none at the default place): every API signed in to from its
    /// address is signed out.
    func signOutEveryAPI(_ session: SignInSession, _ io: IOStreams) -> ExitCode? {
        let env = session.environment
        guard all, apiResource == nil, !session.configurationNamed, Posix.access(session.configurationPath, F_OK) != 0 else { return nil }
        if !yes && Posix.isatty(0) && Posix.isatty(2) {
            guard io.confirm("Sign out every API signed in to from its address?") else {
                io.err("Nothing changed.")
                return .canceled
            }
        }
        let removed = Self.signOutAPIs(except: nil, env)
        Self.report(false, removed.isEmpty ? "Not signed in; nothing to remove." : "Signed out \(removed.map(\.accountLine).joined(separator: ", ")).",
                    revoked: false, removed: removed, io)
        return .success
    }

    init(_ a: Arguments, _ env: [String: String]) throws(UsageError) {
        revoke = a.has(Self.revokeOption)
        all = a.has(Self.allOption)
        yes = a.has(.yes)
        apiResource = TokenTarget.apiAccount(a)
        if all && a.value(.account) != nil { throw UsageError("--all and --account contradict each other; give one") }
    }

    /// Signs out the current account, `--account`, or `--all`; asks first on a terminal; `--revoke` ends the grant
    /// at the provider too (and refuses, changing nothing, when the provider has no revocation endpoint).
    func run(in c: Context) throws(SignInError) -> ExitCode {
        let io = c.io
        let client = c.client
        // One MCP server's token bought with the enterprise sign-in (ID-JAG): only that token goes; the sign-in at the
        // company's IdP, and every other server's token, stay (`signin logout` alone ends them all).
        if let api = apiResource, !client.configuration.foundFromAPI, client.configuration.enterpriseAuthorization.isEnabled,
           !client.configuration.resources.contains(api) {
            let forgot = try client.forgetDerivedToken(DerivedTokenKey(EnterpriseFamily.kind, [api]), account: c.account)
            let text = forgot ? "Forgot the token for \(api.withoutControlCharacters) (the sign-in at \(client.configuration.issuer.withoutControlCharacters) remains; `signin logout` ends it and every server's token)."
                              : "No token is kept for \(api.withoutControlCharacters); nothing to remove."
            if c.json { io.out(JSONText.object(["revoked": .bool(false), "removed": .array(forgot ? [.string(api)] : [])])) } else { io.out(text) }
            return .success
        }
        let targets: [SignInUser]
        let stored: SignInUser?
        do {
            stored = all ? nil : try client.storedUser(account: c.account)
        } catch .storeUnreadable(let path, let reason) where c.account == nil && !revoke {
            // A damaged or tampered entry: signing out is how it is replaced, and needs no decryption.
            guard try client.signOut() else { throw .storeUnreadable(path: path, reason: reason) }
            Self.report(c.json, "Signed out: removed the credentials that could not be read (\(path)).", revoked: false, removed: [], io)
            return .success
        }
        if all {
            targets = try client.accounts()
        } else if let user = stored {
            targets = [user]
        } else {
            let others = (try? client.accounts()) ?? []
            if !others.isEmpty {
                throw SignInError.configInvalid(file: client.configuration.sourcePath, field: nil,
                                                reason: "no account is current, so none was signed out (\(others.count) stored); name one with --account, or use --all")
            }
            targets = []
        }
        // `--all`: every account, the APIs signed in to from their address included (each a sign-in of its own).
        let apis: [SignInUser] = all ? Self.signOutAPIs(except: client.configuration.foundFromAPI ? client.configuration.grantAPI : nil, c.environment) : []
        if targets.isEmpty {
            Self.report(c.json, apis.isEmpty ? "Not signed in; nothing to remove." : "Signed out \(apis.map(\.accountLine).joined(separator: ", ")).", revoked: false, removed: apis, io)
            return .success
        }
        let revoke = revoke
        // Whether the grant can be revoked at all is found out before anyone is asked (nowhere to revoke: exit 2,
        // nothing changed); a provider that cannot be reached is a failed revocation later (exit 5).
        if revoke { for user in targets { _ = try client.revocationEndpoint(account: user.userID) } }
        if !yes && Posix.isatty(0) && Posix.isatty(2) {
            let who = targets.map(\.profile.displayName).joined(separator: ", ")
            let question = "Sign out \(who)?" + (revoke ? " This also ends the grant at the provider (every device signed in with it)." : "")
            guard io.confirm(question) else {
                io.err("Nothing changed.")
                return .canceled
            }
        }
        var removed: [SignInUser] = []
        if !revoke {
            removed = all ? try client.signOutAll() : [try client.signOut(account: targets[0].userID)]
        } else {
            for user in targets {
                do {
                    try blockingAwaitTyped { () async throws(SignInError) in try await client.disconnect(account: user.userID) }
                    removed.append(user)
                } catch .revocationFailed(let cause) {
                    // The library changes nothing when it cannot revoke; `logout --revoke` signs out here anyway, as
                    // documented (a person asked to be signed out), and reports the failure.
                    _ = try client.signOut(account: user.userID)
                    forgetAPI(client)
                    io.err("signin: signed out \(user.profile.displayName) here, but revoking the grant at the provider failed: \(cause.description)")
                    if c.json { io.out(JSONText.object(["revoked": .bool(false), "removed": .array([.string(user.userID)]), "error": .string(cause.description)])) }
                    return .network
                }
            }
        }
        removed += apis
        let names = removed.map(\.profile.displayName).joined(separator: ", ")
        var text = revoke ? "Signed out \(names) and revoked the grant at the provider." : "Signed out \(names) (the grant at the provider remains; --revoke ends it)."
        let remaining = (try? client.accounts()) ?? []
        if !remaining.isEmpty && (try? client.storedUser()) == nil {
            text += "\nNo account is current now (\(remaining.count) still stored); `signin use ACCOUNT` or `signin login` chooses one."
        }
        if remaining.isEmpty, forgetAPI(client), let api = apiResource ?? client.configuration.grantAPI {
            text += "\nForgot the API's registration there too: `signin login --resource \(api.withoutControlCharacters)` registers again."
        }
        Self.report(c.json, text, revoked: revoke, removed: removed, io)
        return .success
    }

    /// Signs out every API signed in to from its address but `except` (the one this run is for), forgetting what was
    /// kept of each; the accounts signed out.
    static func signOutAPIs(except: String?, _ env: [String: String]) -> [SignInUser] {
        let store = CredentialStore.defaultDirectory(environment: env)
        var out: [SignInUser] = []
        for resource in (try? CredentialStore(directory: store).apiResources()) ?? [] where resource != except {
            guard let config = APIAccess.knownConfiguration(for: resource, storeDirectory: store) else { continue }
            let client = SignInClient(configuration: config, environment: env)
            out += (try? client.signOutAll()) ?? []
            try? client.credentialStore?.removeAPIRecords(resource: resource, issuer: config.issuer)
        }
        return out
    }

    /// For an API signed in to from its address whose last account went: what signin kept of it (the API's record
    /// and the client registered for it) goes too, so nothing points at a client with no grant. True when it did.
    @discardableResult
    private func forgetAPI(_ client: SignInClient) -> Bool {
        guard let api = apiResource ?? client.configuration.grantAPI, client.configuration.foundFromAPI, ((try? client.accounts()) ?? []).isEmpty,
              let store = client.credentialStore else { return false }
        return (try? store.removeAPIRecords(resource: api, issuer: client.configuration.issuer)) != nil
    }

    static func report(_ json: Bool, _ text: String, revoked: Bool, removed: [SignInUser], _ io: IOStreams) {
        if json {
            io.out(JSONText.object(["revoked": .bool(revoked && !removed.isEmpty), "removed": .array(removed.map { .string($0.userID) }),
                                 "signed_out": .array(removed.map { JSONText.profile($0.profile) })]))
        } else {
            io.out(text)
        }
    }
}
