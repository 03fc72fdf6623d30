import Dispatch
import FoundationEssentials
import SignInKit

#if canImport(Glibc)
import Glibc
#endif

/// One function per command, each reading top to bottom.
enum Commands {
    static func login(_ client: SignInClient, _ o: Options, _ browsing: Browsing) async throws -> Int32 {
        var opts = SignInOptions()
        opts.timeout = o.timeout
        opts.port = o.port
        opts.loginHint = o.loginHint
        opts.useDeviceFlow = o.device
        opts.openBrowser = !browsing.headless
        if browsing.paste { opts.pasteFileDescriptor = 0 }

        // Ctrl-C (or a closed terminal) cancels the sign-in: the listener closes and frees its port, and we exit 4.
        // Once the code is being exchanged, the sign-in finishes and is saved first.
        signal(SIGINT, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        signal(SIGHUP, SIG_IGN)
        let task = Task { try await client.signIn(options: opts) }
        let sources = [SIGINT, SIGTERM, SIGHUP].map { sig -> DispatchSourceSignal in
            let s = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            s.setEventHandler { task.cancel() }
            s.resume()
            return s
        }
        defer { sources.forEach { $0.cancel() } }
        let user = try await task.value
        if o.json {
            out(JSONText.object(["signed_in": .bool(true), "profile": JSONText.profile(user.profile), "granted_scopes": .array(user.grantedScopes.map { .string($0) })]))
        } else {
            out("Signed in as \(user.profile.displayName)")
            let asked = Set(client.configuration.scopes)
            let missing = asked.subtracting(user.grantedScopes)
            if !missing.isEmpty { err("Note: these scopes were not granted: \(missing.sorted().joined(separator: " "))") }
            if user.refreshToken == nil {
                let hint = client.configuration.isGoogle
                    ? "add \"prompt\": \"consent\" to extra_authorization_parameters"
                    : "many providers want the \"offline_access\" scope for that"
                err("Note: the provider issued no refresh token, so `signin token` will need a new `signin login` once the access token expires (\(hint)).")
            }
        }
        return ExitCode.success
    }

    /// How `login` reaches a browser, decided once per run.
    struct Browsing {
        /// No browser will be opened here: `--no-browser`, or no display, or SSH (an explicit `$BROWSER` wins).
        let headless: Bool
        /// The address the browser ended at may be pasted on standard input: always without a local browser,
        /// otherwise when a person is at a terminal in the foreground (reading a terminal from the background
        /// would stop the process). Never with `--device`.
        let paste: Bool

        static let none = Browsing(headless: false, paste: false)

        private init(headless: Bool, paste: Bool) {
            self.headless = headless
            self.paste = paste
        }

        init(_ o: Options, _ env: [String: String]) {
            headless = o.noBrowser || !Browser.localBrowserLikely(environment: env)
            paste = !o.device && (headless || (isatty(0) == 1 && tcgetpgrp(0) == getpgrp()))
        }
    }

    static func restore(_ client: SignInClient, _ o: Options) throws -> Int32 {
        let user = try client.restore(minimumValidity: TimeInterval(o.minTTL), forceRefresh: o.forceRefresh)
        printProfile(user, json: o.json, verb: "Signed in as")
        return ExitCode.success
    }

    static func whoami(_ client: SignInClient, _ o: Options) throws -> Int32 {
        guard let user = try client.storedUser() else {
            throw SignInError.noPreviousSignIn(reason: "nothing stored for \(client.configuration.issuer) and this client; run `signin login`")
        }
        if let ended = user.grantEndedAt { throw SignInError.grantEnded(on: ended) }
        printProfile(user, json: o.json, verb: nil)
        return ExitCode.success
    }

    static func token(_ client: SignInClient, _ o: Options) throws -> Int32 {
        let user = try client.restore(minimumValidity: TimeInterval(o.minTTL), forceRefresh: o.forceRefresh)
        guard let token = user.accessToken else { throw SignInError.noPreviousSignIn(reason: "no access token stored") }
        if o.json {
            out(JSONText.object(["access_token": .string(token.value), "expires_at": token.expirationDate.map { .string(iso8601($0)) } ?? .null, "token_type": .string("Bearer")]))
        } else {
            out(token.value)
        }
        return ExitCode.success
    }

    static func status(_ client: SignInClient, _ o: Options) throws -> Int32 {
        let user = try client.storedUser()
        let entry = client.store.entryPath(issuer: client.configuration.issuer, clientID: client.configuration.clientID)
        if o.json {
            var obj: [String: JSONValueOut] = [
                "signed_in": .bool(user != nil), "issuer": .string(client.configuration.issuer),
                "client_id": .string(client.configuration.clientID), "store": .string(entry),
            ]
            if let user {
                obj["profile"] = JSONText.profile(user.profile)
                obj["granted_scopes"] = .array(user.grantedScopes.map { .string($0) })
                obj["access_token_expires_at"] = user.accessToken?.expirationDate.map { .string(iso8601($0)) } ?? .null
                obj["has_refresh_token"] = .bool(user.refreshToken != nil)
                obj["grant_ended_at"] = user.grantEndedAt.map { .string(iso8601($0)) } ?? .null
                if user.grantEndedAt != nil { obj["signed_in"] = .bool(false) }
            }
            out(JSONText.object(obj))
        } else if let user, let ended = user.grantEndedAt {
            out("Signed out by the provider: \(user.profile.displayName)\nThe provider ended this sign-in on \(iso8601(ended)); run `signin login`.\nStore: \(entry)")
            return ExitCode.notSignedIn
        } else if let user {
            var lines = ["Signed in as \(user.profile.displayName)", "Issuer: \(client.configuration.issuer)"]
            if let exp = user.accessToken?.expirationDate {
                let left = Int(exp.timeIntervalSinceNow)
                lines.append("Access token: " + (left > 0 ? "valid for \(left / 60) min \(left % 60) s (until \(iso8601(exp)))" : "expired (a refresh happens on the next `signin token`)"))
            }
            lines.append("Refresh token: " + (user.refreshToken != nil ? "stored" : "none"))
            lines.append("Granted scopes: \(user.grantedScopes.joined(separator: " "))")
            lines.append("Store: \(entry)")
            out(lines.joined(separator: "\n"))
        } else {
            out("Not signed in (issuer \(client.configuration.issuer)).\nStore: \(entry)")
            return ExitCode.notSignedIn
        }
        return user == nil || user?.grantEndedAt != nil ? ExitCode.notSignedIn : ExitCode.success
    }

    static func logout(_ client: SignInClient, _ o: Options) async throws -> Int32 {
        if o.revoke {
            do {
                try await client.disconnect()
                report(o.json, "Revoked the grant at the provider and removed the local credentials.", revoked: true, removed: true)
                return ExitCode.success
            } catch .noPreviousSignIn {
                report(o.json, "Not signed in; nothing to revoke.", revoked: false, removed: false)
                return ExitCode.success
            } catch .revocationFailed(let cause) {
                err("signin: the local credentials were removed, but revoking the grant at the provider failed: \(cause.description)")
                if o.json { out(JSONText.object(["revoked": .bool(false), "removed": .bool(true), "error": .string(cause.description)])) }
                return ExitCode.network
            }
        }
        let removed = try client.signOut()
        report(o.json, removed ? "Signed out: removed the local credentials (the grant at the provider remains; use --revoke to end it)." : "Not signed in; nothing to remove.", revoked: false, removed: removed)
        return ExitCode.success
    }

    static func report(_ json: Bool, _ text: String, revoked: Bool, removed: Bool) {
        if json { out(JSONText.object(["revoked": .bool(revoked), "removed": .bool(removed)])) } else { out(text) }
    }

    static func printProfile(_ user: User, json: Bool, verb: String?) {
        if json {
            out(JSONText.object(["profile": JSONText.profile(user.profile), "granted_scopes": .array(user.grantedScopes.map { .string($0) }), "issuer": .string(user.issuer)]))
        } else {
            out(verb.map { "\($0) \(user.profile.displayName)" } ?? user.profile.displayName)
        }
    }
}

func iso8601(_ d: Date) -> String { d.formatted(.iso8601) }
