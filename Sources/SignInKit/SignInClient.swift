import Dispatch
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// How an interactive sign-in runs.
public struct SignInOptions: Sendable {
    /// Open the system browser (else only report the URL through `.authorizationURL`).
    public var openBrowser = true
    /// Seconds to wait for the person to finish in the browser.
    public var timeout = 300
    /// Overrides the configuration's `redirect_port`.
    public var port: Int?
    /// Also accept the address the browser ended at, pasted on this file descriptor (standard input: 0).
    public var pasteFileDescriptor: Int32?
    /// Suggests an account to the provider.
    public var loginHint: String?
    /// Use the device authorization grant (RFC 8628) instead of a browser on this machine.
    public var useDeviceFlow = false
    /// When set, the sign-in must end with this account (incremental consent).
    public var requireUserID: String?
    /// The defaults: browser, 5 minutes, configured port.
    public init() {}
}

/// Progress of a sign-in, for a caller to show. Never carries a token.
public enum SignInEvent: Sendable {
    /// The URL to visit and where the answer is awaited; `browser` says whether a browser was started.
    case authorizationURL(url: String, redirectURI: String, port: Int, browser: Browser.Outcome?)
    /// A request reached the callback but was not for this sign-in; still waiting.
    case refusedCallback(reason: String)
    /// A pasted address was refused; still waiting.
    case refusedPaste(reason: String)
    /// The device flow's code to show.
    case deviceCode(DeviceCode)
    /// The authorization code arrived and is being exchanged.
    case exchangingCode
    /// The browser command failed (for example `xdg-open` with no browser installed); still waiting.
    case browserFailed(reason: String, port: Int)
}

/// Google Sign-In's `GIDSignIn` for Swift programs on Linux: sign in through the browser, restore the previous
/// sign-in silently, hand out fresh access tokens, sign out and disconnect.
///
/// ```swift
/// let client = SignInClient(configuration: try Configuration.load(path: "config.json"))
/// let user = client.hasPreviousSignIn ? try await client.restorePreviousSignIn() : try await client.signIn()
/// print(user.profile.displayName)
/// ```
public final class SignInClient: Sendable {
    /// The client and provider this instance signs in with.
    public let configuration: Configuration
    /// Where credentials are kept.
    public let store: CredentialStore
    let environment: [String: String]
    let onEvent: @Sendable (SignInEvent) -> Void

    /// - Parameters:
    ///   - storeDirectory: defaults to `$XDG_DATA_HOME/signin` (`~/.local/share/signin`).
    ///   - environment: where `$BROWSER`, `$HOME` and friends are read; defaults to the process environment.
    ///   - onEvent: called (on any thread) as a sign-in progresses.
    public init(configuration: Configuration, storeDirectory: String? = nil, environment: [String: String]? = nil,
                onEvent: @escaping @Sendable (SignInEvent) -> Void = { _ in }) {
        let env = environment ?? ProcessEnvironment.current
        self.configuration = configuration
        self.environment = env
        self.store = CredentialStore(directory: storeDirectory ?? CredentialStore.defaultDirectory(environment: env))
        self.onEvent = onEvent
    }

    var issuer: String { configuration.issuer }
    var clientID: String { configuration.clientID }

    // MARK: Offline

    /// The stored user, without network. Throws when the store exists but cannot be trusted.
    public func storedUser() throws -> User? {
        try store.load(issuer: issuer, clientID: clientID).map { User($0, client: self) }
    }

    /// The stored user, or nil (also when the store is unreadable; use `storedUser()` to learn why).
    public var currentUser: User? { try? storedUser() }

    /// Whether a previous sign-in is stored that `restorePreviousSignIn()` can use without a browser.
    public var hasPreviousSignIn: Bool {
        guard let c = try? store.load(issuer: issuer, clientID: clientID) else { return false }
        return c.refreshToken != nil || isFresh(c, minimumValidity: 0)
    }

    func isFresh(_ c: StoredCredentials, minimumValidity: TimeInterval) -> Bool {
        guard c.accessToken != nil, let exp = c.accessTokenExpiry else { return false }
        return exp.timeIntervalSinceNow >= minimumValidity
    }

    // MARK: Restore and refresh

    /// Restores the previous sign-in without a browser, refreshing the tokens when the access token expires
    /// within `minimumValidity` seconds (or always when `forceRefresh`).
    ///
    /// Several processes may call this at once: one refreshes while the others wait on a lock and then use its
    /// result, so a provider that rotates one-use refresh tokens sees a single refresh.
    public func restorePreviousSignIn(minimumValidity: TimeInterval = 60, forceRefresh: Bool = false) async throws -> User {
        try await offPool { () throws(SignInError) -> User in try self.restore(minimumValidity: minimumValidity, forceRefresh: forceRefresh) }
    }

    /// The synchronous body of `restorePreviousSignIn`, for callers that are not async (the CLI's cached path).
    public func restore(minimumValidity: TimeInterval = 60, forceRefresh: Bool = false) throws(SignInError) -> User {
        guard let cached = try store.load(issuer: issuer, clientID: clientID) else {
            throw .noPreviousSignIn(reason: "nothing stored for \(issuer) and this client; run `signin login`")
        }
        if !forceRefresh && isFresh(cached, minimumValidity: minimumValidity) { return User(cached, client: self) }
        let seen = cached.accessToken
        return try store.withLock(issuer: issuer, clientID: clientID) { () throws(SignInError) -> User in
            // Re-read under the lock: another process may have refreshed (and rotated the refresh token) meanwhile.
            guard let current = try store.load(issuer: issuer, clientID: clientID) else {
                throw .noPreviousSignIn(reason: "signed out meanwhile")
            }
            let someoneElseRefreshed = current.accessToken != seen
            if isFresh(current, minimumValidity: minimumValidity) && (!forceRefresh || someoneElseRefreshed) {
                return User(current, client: self)
            }
            return try refreshLocked(current)
        }
    }

    private func refreshLocked(_ current: StoredCredentials) throws(SignInError) -> User {
        guard let refreshToken = current.refreshToken else {
            throw .noPreviousSignIn(reason: "cannot refresh: no refresh token is stored (the provider issued none); run `signin login`")
        }
        let tokens = TokenClient(config: configuration, endpoints: current.endpoints)
        let response: TokenResponse
        do {
            response = try tokens.refresh(refreshToken)
        } catch {
            // Under the lock we used the newest refresh token, so the provider's refusal is about the grant itself.
            // Also a 400 with an empty body: some providers answer a dead refresh token that way.
            if case .providerError(_, let code, let detail) = error,
               ["invalid_grant", "invalid_code", "unauthorized_client"].contains(code) || (code == "http_400" && detail?.contains("empty body") == true) {
                throw .noPreviousSignIn(reason: "the provider no longer accepts the stored grant (\(code)); run `signin login`")
            }
            throw error
        }
        var next = current
        next.refreshToken = response.refreshToken ?? current.refreshToken
        if next.refreshToken != current.refreshToken {
            // The old refresh token may already be dead (one-use rotation): keep the new one before anything else.
            try store.save(next)
        }
        if let raw = response.idToken {
            let verified = try verifyIDToken(raw, endpoints: current.endpoints, nonce: nil)
            guard verified.subject == current.profile.userID else {
                throw .invalidIDToken(reason: "the refreshed ID token is for another account (sub changed)")
            }
            var profile = verified.profile
            if profile.isMissingBasics { profile.merge(from: current.profile) }
            next.profile = profile
            next.idToken = raw
            next.idTokenExpiry = verified.expiry
        }
        next.accessToken = response.accessToken
        next.accessTokenExpiry = response.expiresIn.map { Date(timeIntervalSinceNow: TimeInterval($0)) }
        if let scope = response.scope { next.grantedScopes = scope }
        next.savedAt = Date()
        try store.save(next)
        return User(next, client: self)
    }

    // MARK: Interactive sign-in

    /// Signs in through the browser (or the device flow), verifies the ID token and stores the credentials.
    /// Cancel the surrounding task to stop waiting (the listener is closed and its port freed).
    public func signIn(hint: String? = nil, additionalScopes: [String] = [], options: SignInOptions = SignInOptions()) async throws -> User {
        let canceller = Canceller()
        var opts = options
        if let hint { opts.loginHint = hint }
        let o = opts
        return try await withTaskCancellationHandler {
            try await offPool { () throws(SignInError) -> User in try self.signInBlocking(additionalScopes: additionalScopes, options: o, canceller: canceller) }
        } onCancel: {
            canceller.cancel()
        }
    }

    func scopes(adding extra: [String]) -> [String] {
        var s = configuration.scopes
        for x in extra where !s.contains(x) { s.append(x) }
        return s
    }

    func signInBlocking(additionalScopes: [String], options: SignInOptions, canceller: Canceller) throws(SignInError) -> User {
        // A store that cannot be read safely is never overwritten: say so now, before the person goes
        // through the browser (`signOut()` removes the entry on purpose).
        let previous = try store.load(issuer: issuer, clientID: clientID)
        let http = HTTPClient(configuration: configuration)
        let endpoints = try Discovery.endpoints(for: configuration, http: http)
        let tokens = TokenClient(config: configuration, endpoints: endpoints)
        let scopes = scopes(adding: additionalScopes)
        var nonce: String?
        var receiver: LoopbackReceiver?
        // The keys are needed only after the code exchange; fetch them while the person is in the browser.
        let jwks = Prefetch { () throws(SignInError) -> JWKS in try JWKS.fetch(endpoints.jwks, http: http) }
        // Never return while it still runs: a program that exits then would tear down OpenSSL under it.
        defer { _ = jwks.value }
        let response: TokenResponse
        if options.useDeviceFlow {
            response = try DeviceAuthorization(tokens: tokens, scopes: scopes).run(canceller: canceller, timeout: options.timeout) { code in
                onEvent(.deviceCode(code))
            }
        } else {
            let r = try LoopbackReceiver(port: options.port ?? configuration.redirectPort, path: configuration.redirectPath)
            receiver = r  // closed by `finish`, or when it is released on an error
            let request = try AuthorizationRequest(config: configuration, endpoints: endpoints, redirectURI: r.redirectURI, scopes: scopes, loginHint: options.loginHint)
            nonce = request.nonce
            let port = r.port
            let events = onEvent
            let outcome = options.openBrowser
                ? Browser.open(request.url, environment: environment) { events(.browserFailed(reason: $0, port: port)) } : nil
            onEvent(.authorizationURL(url: request.url, redirectURI: r.redirectURI, port: r.port, browser: outcome))
            let deadline = LoopbackReceiver.now() + Double(options.timeout)
            let answer = try r.waitForCode(state: request.state, issuer: configuration.issuer, acceptGoogleIssuerForm: configuration.isGoogle,
                                           deadline: deadline, timeoutSeconds: options.timeout, canceller: canceller, pasteFD: options.pasteFileDescriptor) { notice in
                switch notice {
                case .refusedCallback(let reason): onEvent(.refusedCallback(reason: reason))
                case .refusedPaste(let reason): onEvent(.refusedPaste(reason: reason))
                }
            }
            if !answer.viaBrowser { r.close() }  // the paste won; `finish` then returns at once
            onEvent(.exchangingCode)
            do {
                response = try tokens.exchange(code: answer.code, verifier: request.pkce.verifier, redirectURI: request.redirectURI)
            } catch {
                if answer.viaBrowser { r.finish(success: false, message: error.description, seconds: 3) }
                throw error
            }
        }
        do {
            let user = try complete(response, endpoints: endpoints, tokens: tokens, nonce: nonce, requestedScopes: scopes,
                                    requireUserID: options.requireUserID, jwks: jwks.value, previous: previous)
            receiver?.finish(success: true, message: "Signed in as \(user.profile.displayName). You may close this tab and return to the terminal.", seconds: 3)
            return user
        } catch {
            receiver?.finish(success: false, message: error.description, seconds: 3)
            throw error
        }
    }

    private func complete(_ response: TokenResponse, endpoints: Endpoints, tokens: TokenClient, nonce: String?, requestedScopes: [String],
                          requireUserID: String?, jwks: JWKS?, previous: StoredCredentials?) throws(SignInError) -> User {
        guard let raw = response.idToken else {
            throw .providerError(endpoint: tokens.tokenEndpointName, code: "invalid_response", detail: "no id_token (is \"openid\" among the scopes?)")
        }
        let verified = try verifyIDToken(raw, endpoints: endpoints, nonce: nonce, prefetched: jwks)
        if let required = requireUserID, verified.subject != required {
            throw .mismatchWithCurrentUser(expected: required, actual: verified.profile.displayName)
        }
        var profile = verified.profile
        if profile.isMissingBasics, let info = try? tokens.userinfo(accessToken: response.accessToken) { profile.merge(userinfo: info) }
        let creds = StoredCredentials(
            issuer: issuer, clientID: clientID,
            // Google omits the refresh token when one was already issued: keep the old one for the same account.
            refreshToken: response.refreshToken ?? (previous?.profile.userID == verified.subject ? previous?.refreshToken : nil),
            accessToken: response.accessToken,
            accessTokenExpiry: response.expiresIn.map { Date(timeIntervalSinceNow: TimeInterval($0)) },
            idToken: raw, idTokenExpiry: verified.expiry, profile: profile,
            grantedScopes: response.scope ?? requestedScopes, endpoints: endpoints, savedAt: Date())
        try store.withLock(issuer: issuer, clientID: clientID) { () throws(SignInError) in try store.save(creds) }
        return User(creds, client: self)
    }

    func verifyIDToken(_ raw: String, endpoints: Endpoints, nonce: String?, prefetched: JWKS? = nil) throws(SignInError) -> IDToken {
        let http = HTTPClient(configuration: configuration)
        let jwks: JWKS
        if let prefetched { jwks = prefetched } else { jwks = try JWKS.fetch(endpoints.jwks, http: http) }
        let expect = IDToken.Expectations(issuer: issuer, clientID: clientID, nonce: nonce, hostedDomain: configuration.hostedDomain)
        return try IDToken.verify(raw, jwks: jwks, refetch: { () throws(SignInError) -> JWKS in try JWKS.fetch(endpoints.jwks, http: http) }, expect: expect)
    }

    // MARK: Sign-out

    /// Removes the stored credentials for this issuer and client. Returns false when there were none.
    @discardableResult
    public func signOut() throws -> Bool {
        try store.withLock(issuer: issuer, clientID: clientID) { () throws(SignInError) -> Bool in try store.remove(issuer: issuer, clientID: clientID) }
    }

    /// Revokes the grant at the provider (RFC 7009), then removes the local credentials. The local credentials are
    /// removed even when revocation fails; the failure is then thrown.
    public func disconnect() async throws {
        try await offPool { () throws(SignInError) in try self.disconnectBlocking() }
    }

    func disconnectBlocking() throws(SignInError) {
        var revokeError: SignInError?
        do {
            try store.withLock(issuer: issuer, clientID: clientID) { () throws(SignInError) in
                guard let c = try store.load(issuer: issuer, clientID: clientID) else {
                    throw .noPreviousSignIn(reason: "nothing stored to revoke")
                }
                let tokens = TokenClient(config: configuration, endpoints: c.endpoints)
                do {
                    if let rt = c.refreshToken {
                        try tokens.revoke(token: rt, hint: "refresh_token", accessToken: c.accessToken)
                    } else if let at = c.accessToken {
                        try tokens.revoke(token: at, hint: "access_token", accessToken: at)
                    }
                } catch {
                    revokeError = (error as? SignInError) ?? .system(reason: "revocation failed")
                }
                try store.remove(issuer: issuer, clientID: clientID)
            }
        }
        if let revokeError { throw revokeError }
    }
}

extension Profile {
    mutating func merge(from old: Profile) {
        name = name ?? old.name
        givenName = givenName ?? old.givenName
        familyName = familyName ?? old.familyName
        email = email ?? old.email
        emailVerified = emailVerified ?? old.emailVerified
        pictureURL = pictureURL ?? old.pictureURL
    }
}

/// Work started now on a Dispatch thread whose result is collected later; a failure reads as nil (the caller
/// then does the work itself and reports its error).
final class Prefetch<T: Sendable>: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private var result: T?

    init(_ work: @escaping @Sendable () throws(SignInError) -> T) {
        DispatchQueue.global().async {
            self.result = try? work()
            self.done.signal()
        }
    }

    /// Waits for the work to finish.
    var value: T? {
        done.wait()
        done.signal()
        return result
    }
}

/// Runs blocking work (sockets, libcurl, file locks) on a Dispatch thread, off Swift's cooperative pool.
func offPool<T: Sendable>(_ body: @escaping @Sendable () throws(SignInError) -> T) async throws -> T {
    try await withCheckedThrowingContinuation { (k: CheckedContinuation<T, any Error>) in
        DispatchQueue.global().async {
            do { k.resume(returning: try body()) } catch { k.resume(throwing: error) }
        }
    }
}

/// The process environment as a dictionary, read from `environ` (FoundationEssentials has no ProcessInfo
/// environment on every platform, and this avoids loading more of Foundation).
public enum ProcessEnvironment {
    /// The current environment variables.
    public static var current: [String: String] {
        var env: [String: String] = [:]
        var p = environ
        while let entry = p.pointee {
            let s = String(cString: entry)
            if let eq = s.firstIndex(of: "=") { env[String(s[..<eq])] = String(s[s.index(after: eq)...]) }
            p += 1
        }
        return env
    }
}
