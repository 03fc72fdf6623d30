import Dispatch
import FoundationEssentials
@_spi(CLI) import SignInKit

#if canImport(Glibc)
import Glibc
#endif

/// One function per command, each reading top to bottom.
enum Commands {
    static func login(_ c: Context) throws(SignInError) -> ExitCode {
        let a = c.arguments
        // Who is signed in already, said before any browser opens.
        if !c.json, let current = try c.client.storedUser() {
            if let ended = current.grantEndedAt {
                err("The provider ended the sign-in of \(current.profile.displayName) on \(iso8601(ended)); signing in again replaces it.")
            } else {
                err("Already signed in as \(current.profile.displayName). Signing in adds another account, or updates this one if you choose it again; the new sign-in becomes the current account.")
            }
        }
        var opts = SignInOptions()
        opts.timeout = .seconds((try? a.int(Command.timeout, default: 300, in: 1...86400)) ?? 300)
        opts.port = a.value(Command.port).flatMap { Int($0) }
        opts.loginHint = a.value(Command.loginHint) ?? c.account
        opts.useDeviceFlow = a.has(Command.device)
        opts.openBrowser = !c.browsing.headless
        if c.browsing.paste { opts.pasteFileDescriptor = 0 }
        let user = try signIn(c.client, opts)
        if c.json {
            out(JSONText.object(JSONText.user(user)))
        } else {
            out("Signed in as \(user.profile.displayName)")
            let missing = Set(c.client.configuration.scopes).subtracting(user.grantedScopes)
            if !missing.isEmpty { err("Note: these scopes were not granted: \(missing.sorted().joined(separator: " "))") }
            if user.refreshToken == nil {
                let hint = c.client.configuration.providerRules.refreshTokenHint
                err("Note: the provider issued no refresh token, so `signin token` will need a new `signin login` once the access token expires (\(hint)).")
            }
        }
        return .success
    }

    /// Runs an interactive sign-in; Ctrl-C, SIGTERM or a closed terminal cancel it (the listener closes and frees
    /// its port; exit 4). Once the code is being exchanged, the sign-in finishes and is saved first.
    static func signIn(_ client: SignInClient, _ opts: SignInOptions) throws(SignInError) -> SignInUser {
        signal(SIGINT, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        signal(SIGHUP, SIG_IGN)
        let task = Task { () async throws(SignInError) -> SignInUser in try await client.signIn(options: opts) }
        let sources = [SIGINT, SIGTERM, SIGHUP].map { sig -> DispatchSourceSignal in
            let s = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            s.setEventHandler { task.cancel() }
            s.resume()
            return s
        }
        defer {
            sources.forEach { $0.cancel() }
            SignalHolding.install()
        }
        do {
            return try blockingAwait { try await task.value }
        } catch let e as SignInError {
            throw e
        } catch {
            throw .canceled(reason: "interrupted")
        }
    }

    static func restore(_ c: Context) throws(SignInError) -> ExitCode {
        let user = try c.restore()
        printProfile(user, c, verb: "Signed in as")
        return .success
    }

    static func whoami(_ c: Context) throws(SignInError) -> ExitCode {
        let user = try c.client.signedInUser(account: c.account)
        if let ended = user.grantEndedAt { throw SignInError.grantEnded(on: ended) }
        printProfile(user, c, verb: nil)
        return .success
    }

    static func token(_ c: Context) throws(SignInError) -> ExitCode {
        let user = try c.restore()
        guard let token = user.accessToken else { throw SignInError.noPreviousSignIn(reason: .noToken(.access)) }
        if c.json {
            out(JSONText.object(["access_token": .string(token.value), "expires_at": token.expirationDate.map { .string(iso8601($0)) } ?? .null,
                                 "token_type": .string("Bearer"), "sub": .string(user.userID)]))
        } else {
            out(token.value)
        }
        return .success
    }

    static func idToken(_ c: Context) throws(SignInError) -> ExitCode {
        let user = try c.restore(.id)
        guard let token = user.idToken else { throw SignInError.noPreviousSignIn(reason: .noToken(.id)) }
        if c.json {
            out(JSONText.object(["id_token": .string(token.value), "expires_at": token.expirationDate.map { .string(iso8601($0)) } ?? .null,
                                 "claims": JSONText.claims(of: token.value)]))
        } else {
            out(token.value)
        }
        return .success
    }

    static func status(_ c: Context) throws(SignInError) -> ExitCode {
        let client = c.client
        let user = try client.storedUser(account: c.account)
        let store = client.fileStore.directory
        if c.json {
            var obj: [String: JSONValueOut] = user.map { JSONText.user($0) } ?? [
                "signed_in": .bool(false), "issuer": .string(client.configuration.issuer),
            ]
            obj["client_id"] = .string(client.configuration.clientID)
            obj["store"] = .string(store)
            obj["key"] = .string(client.fileStore.keyDescription)
            obj["configuration"] = .string(client.configuration.sourcePath)
            out(JSONText.object(obj))
        } else if let user, let ended = user.grantEndedAt {
            out("Signed out by the provider: \(user.profile.displayName)\nThe provider ended this sign-in on \(iso8601(ended)); run `signin login`.\nStore: \(store)")
            return .notSignedIn
        } else if let user {
            var lines = ["Signed in as \(user.profile.displayName)" + (user.isCurrent ? "" : " (not the current account)"), "Issuer: \(client.configuration.issuer)"]
            if let exp = user.accessToken?.expirationDate {
                let left = Int(exp.timeIntervalSinceNow)
                lines.append("Access token: " + (left > 0 ? "valid for \(left / 60) min \(left % 60) s (until \(iso8601(exp)))" : "expired (a refresh happens on the next `signin token`)"))
            }
            lines.append("Refresh token: " + (user.refreshToken != nil ? "stored" : "none"))
            lines.append("Granted scopes: \(user.grantedScopes.joined(separator: " ").withoutControlCharacters)")
            lines.append("Store: \(store) (key: \(client.fileStore.keyDescription))")
            lines.append("Configuration: \(client.configuration.sourcePath)")
            out(lines.joined(separator: "\n"))
        } else {
            out("Not signed in (issuer \(client.configuration.issuer)).\nStore: \(store)")
            if let others = try? client.accounts(), !others.isEmpty {
                out("\(others.count) account(s) stored, none current: `signin use ACCOUNT` to choose one.")
            }
        }
        return user == nil || user?.grantEndedAt != nil ? .notSignedIn : .success
    }

    static func accounts(_ c: Context) throws(SignInError) -> ExitCode {
        let users = try c.client.accounts()
        if c.json {
            out(JSONText.render(.array(users.map { .object(JSONText.user($0)) })))
        } else if users.isEmpty {
            out("No accounts for \(c.client.configuration.issuer) (\(c.client.configuration.sourcePath)); run `signin login`.")
        } else {
            out(accountLines(users).joined(separator: "\n"))
        }
        return .success
    }

    static func accountLines(_ users: [SignInUser]) -> [String] {
        let width = users.map { ($0.profile.email ?? $0.userID).withoutControlCharacters.count }.max() ?? 0
        return users.map { u in
            let id = (u.profile.email ?? u.userID).withoutControlCharacters
            let name = (u.profile.name ?? "").withoutControlCharacters
            var state: String
            if let ended = u.grantEndedAt {
                state = "ended by the provider on \(iso8601(ended))"
            } else if let exp = u.accessToken?.expirationDate {
                state = exp > Date() ? "token until \(iso8601(exp))" : "token expired (refreshes when used)"
                if u.refreshToken == nil { state += ", no refresh token" }
            } else {
                state = "no access token"
            }
            return "\(u.isCurrent ? "*" : " ") \(id.padding(to: width))  \(name.isEmpty ? "" : name + "  ")\(state)"
        }
    }

    /// `signin accounts --all`: every named configuration and its accounts.
    static func accountsEverywhere(_ a: Arguments, _ env: [String: String]) -> ExitCode {
        var sections: [String] = []
        var json: [JSONValueOut] = []
        for name in SignInConfiguration.profileNames(environment: env) {
            let path = SignInConfiguration.directory(environment: env) + "/\(name).json"
            guard let config = try? SignInConfiguration.load(path: path) else {
                sections.append("\(name) (\(path)): cannot be read; `signin status --profile \(name)` says why")
                continue
            }
            let client = SignInClient(configuration: config, environment: env)
            let users = (try? client.accounts()) ?? []
            sections.append("\(name) (\(config.issuer)):\n" + (users.isEmpty ? "  no accounts" : accountLines(users).map { "  " + $0 }.joined(separator: "\n")))
            for u in users {
                var o = JSONText.user(u)
                o["profile_name"] = .string(name)
                json.append(.object(o))
            }
        }
        if a.has(.json) { out(JSONText.render(.array(json))) } else {
            out(sections.isEmpty ? "No configurations in \(SignInConfiguration.directory(environment: env)); run `signin init`." : sections.joined(separator: "\n"))
        }
        return .success
    }

    static func use(_ c: Context) throws(SignInError) -> ExitCode {
        let user = try c.client.switchAccount(to: c.arguments.positional[0])
        if c.json { out(JSONText.object(JSONText.user(user))) } else { out("Now using \(user.profile.displayName)") }
        return .success
    }

    /// Signs out the current account, `--account`, or `--all`; asks first on a terminal; `--revoke` ends the grant
    /// at the provider too (and refuses, changing nothing, when the provider has no revocation endpoint).
    static func logout(_ c: Context) throws(SignInError) -> ExitCode {
        let a = c.arguments
        let client = c.client
        let targets: [SignInUser]
        let stored: SignInUser?
        do {
            stored = a.has(Command.all) ? nil : try client.storedUser(account: c.account)
        } catch .storeUnreadable(let path, let reason) where c.account == nil && !a.has(Command.revoke) {
            // A damaged or tampered entry: signing out is how it is replaced, and needs no decryption.
            guard try client.signOut() else { throw .storeUnreadable(path: path, reason: reason) }
            report(c.json, "Signed out: removed the credentials that could not be read (\(path)).", revoked: false, removed: [])
            return .success
        }
        if a.has(Command.all) {
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
        if targets.isEmpty {
            report(c.json, "Not signed in; nothing to remove.", revoked: false, removed: [])
            return .success
        }
        let revoke = a.has(Command.revoke)
        // Whether the grant can be revoked at all is found out before anyone is asked (nowhere to revoke: exit 2,
        // nothing changed); a provider that cannot be reached is a failed revocation later (exit 5).
        if revoke { for user in targets { _ = try client.revocationEndpoint(account: user.userID) } }
        if !a.has(Command.yes) && isatty(0) == 1 && isatty(2) == 1 {
            let who = targets.map(\.profile.displayName).joined(separator: ", ")
            let question = "Sign out \(who)?" + (revoke ? " This also ends the grant at the provider (every device signed in with it)." : "")
            guard confirm(question) else {
                err("Nothing changed.")
                return .canceled
            }
        }
        var removed: [SignInUser] = []
        if !revoke {
            removed = a.has(Command.all) ? try client.signOutAll() : [try client.signOut(account: targets[0].userID)]
        } else {
            for user in targets {
                do {
                    try blockingAwaitTyped { () async throws(SignInError) in try await client.disconnect(account: user.userID) }
                    removed.append(user)
                } catch .revocationFailed(let cause) {
                    err("signin: signed out \(user.profile.displayName) here, but revoking the grant at the provider failed: \(cause.description)")
                    if c.json { out(JSONText.object(["revoked": .bool(false), "removed": .array([.string(user.userID)]), "error": .string(cause.description)])) }
                    return .network
                }
            }
        }
        let names = removed.map(\.profile.displayName).joined(separator: ", ")
        var text = revoke ? "Signed out \(names) and revoked the grant at the provider." : "Signed out \(names) (the grant at the provider remains; --revoke ends it)."
        let remaining = (try? client.accounts()) ?? []
        if !remaining.isEmpty && (try? client.storedUser()) == nil {
            text += "\nNo account is current now (\(remaining.count) still stored); `signin use ACCOUNT` or `signin login` chooses one."
        }
        report(c.json, text, revoked: revoke, removed: removed)
        return .success
    }

    static func report(_ json: Bool, _ text: String, revoked: Bool, removed: [SignInUser]) {
        if json {
            out(JSONText.object(["revoked": .bool(revoked && !removed.isEmpty), "removed": .array(removed.map { .string($0.userID) }),
                                 "signed_out": .array(removed.map { JSONText.profile($0.profile) })]))
        } else {
            out(text)
        }
    }

    static func printProfile(_ user: SignInUser, _ c: Context, verb: String?) {
        if c.json {
            out(JSONText.object(JSONText.user(user)))
        } else {
            out(verb.map { "\($0) \(user.profile.displayName)" } ?? user.profile.displayName)
        }
    }

    /// `signin key move --to STORAGE`: a new store key, kept where STORAGE says; every entry is encrypted again
    /// under it (crash-safe: see `CredentialStore.moveKey`), so a copy of the old key opens nothing written after.
    static func keyMove(_ c: Context) throws(SignInError) -> ExitCode {
        let target = KeyStorage(rawValue: c.arguments.value(Command.to)!)!
        // Every configuration shares the store: name them all, so older entries of each are carried over first.
        var configurations = [(issuer: c.client.configuration.issuer, clientID: c.client.configuration.clientID)]
        for name in SignInConfiguration.profileNames(environment: c.environment) {
            if let config = try? SignInConfiguration.load(path: SignInConfiguration.directory(environment: c.environment) + "/\(name).json") {
                configurations.append((config.issuer, config.clientID))
            }
        }
        let result = try c.client.fileStore.moveKey(to: target, configurations: configurations)
        if c.json {
            out(JSONText.object(["from": .string(result.from), "to": .string(result.to), "moved": .bool(result.moved), "reencrypted": .int(result.reencrypted)]))
        } else if !result.moved {
            out("The key is already there: \(result.to)")
        } else {
            out("Moved the store to a new key.\n  from: \(result.from)\n  to:   \(result.to)\n\(result.reencrypted) entr\(result.reencrypted == 1 ? "y" : "ies") encrypted again under it; the old key, and any copy of it, opens nothing written from now on.")
        }
        return .success
    }

    /// `signin lock`: the kernel keyring forgets the unlocked key.
    static func lock(_ c: Context) -> ExitCode {
        let dropped = c.client.fileStore.lock()
        if c.json { out(JSONText.object(["locked": .bool(dropped)])) } else {
            out(dropped ? "Locked: the next command unlocks the store key again." : "Nothing to lock (no unlocked key is held for this store).")
        }
        return .success
    }

    static func version(_ a: Arguments) -> ExitCode {
        if a.has(.json) { out(JSONText.object(["version": .string(SignInKitVersion.string)])) } else { out("signin \(SignInKitVersion.string)") }
        return .success
    }

    static func help(_ a: Arguments) throws(UsageError) -> ExitCode {
        if a.has(Command.man) {
            out(Help.manPage)
            return .success
        }
        guard let name = a.positional.first else {
            out(Help.general)
            return .success
        }
        guard let command = Command(rawValue: name) else {
            throw UsageError("no command \"\(name)\"" + (Command.suggestion(for: name).map { " (did you mean `\($0)`?)" } ?? ""))
        }
        out(Help.text(for: command))
        return .success
    }

    /// `signin __complete accounts|profiles PREFIX -- WORDS...` (hidden; the completion scripts call it): the
    /// stored accounts of the configuration WORDS name (`--profile`, `-c`), or the configuration names, that start
    /// with PREFIX, one a line. A candidate holding a control character (a newline would split it) is left out;
    /// nothing is ever asked (no passphrase prompt on TAB) and nothing is printed on failure.
    static func complete(_ args: [String], _ env: [String: String]) -> ExitCode {
        guard let kind = args.first else { return .usage }
        let prefix = args.count > 1 && args[1] != "--" ? args[1] : ""
        let words = args.firstIndex(of: "--").map { Array(args[($0 + 1)...]) } ?? []
        var config: String?, profile: String?
        var i = 0
        while i < words.count {
            if i + 1 < words.count, ["-c", "--config"].contains(words[i]) { config = words[i + 1]; i += 2; continue }
            if i + 1 < words.count, words[i] == "--profile" { profile = words[i + 1]; i += 2; continue }
            i += 1
        }
        var candidates: [String] = []
        switch kind {
        case "profiles":
            candidates = SignInConfiguration.profileNames(environment: env).filter(SignInConfiguration.isValidProfileName)
        case "accounts":
            for p in [profile, env["SIGNIN_PROFILE"]].compactMap({ $0 }) where !p.isEmpty && !SignInConfiguration.isValidProfileName(p) { return .success }
            let path = SignInConfiguration.defaultPath(explicit: config, profile: profile, environment: env)
            guard let configuration = try? SignInConfiguration.load(path: path) else { return .success }
            let client = SignInClient(configuration: configuration, environment: env, passphrase: { _ in nil })
            candidates = ((try? client.accounts()) ?? []).map { $0.profile.email ?? $0.userID }
        default:
            return .usage
        }
        let literal = candidates.filter { c in
            !c.isEmpty && c.hasPrefix(prefix) && !c.unicodeScalars.contains(where: \.isControl)
        }
        if !literal.isEmpty { out(literal.joined(separator: "\n")) }
        return .success
    }

    static func completion(_ a: Arguments) throws(UsageError) -> ExitCode {
        guard let shell = a.positional.first, let script = Completion.script(for: shell) else {
            throw UsageError("`signin completion` takes bash, zsh or fish")
        }
        out(script)
        return .success
    }
}

/// `blockingAwait` for typed-throwing work.
func blockingAwaitTyped<T: Sendable>(_ body: @escaping @Sendable () async throws(SignInError) -> T) throws(SignInError) -> T {
    do { return try blockingAwait { try await body() } } catch let e as SignInError { throw e } catch { throw .system(reason: "\(error)") }
}

func iso8601(_ d: Date) -> String { d.formatted(.iso8601) }

extension String {
    func padding(to width: Int) -> String { count >= width ? self : self + String(repeating: " ", count: width - count) }
}

extension SignInClient {
    /// The command always keeps credentials in the encrypted file store (CLI.run builds the client so).
    var fileStore: CredentialStore { credentialStore! }
}
