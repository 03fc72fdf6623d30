import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

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

    /// The stored user, without network (also when the provider has ended its grant: see `User.grantEndedAt`).
    /// Throws when the store exists but cannot be trusted.
    public func storedUser() throws(SignInError) -> User? {
        try store.load(issuer: issuer, clientID: clientID).map { User($0, client: self) }
    }

    /// The stored user, or nil (also when the store is unreadable; use `storedUser()` to learn why).
    public var currentUser: User? { try? storedUser() }

    /// Whether a previous sign-in is stored that `restorePreviousSignIn()` can use without a browser: false when
    /// nothing is stored, the store cannot be read, or the provider has ended the grant.
    public var hasPreviousSignIn: Bool {
        guard let c = try? store.load(issuer: issuer, clientID: clientID), c.grantEndedAt == nil else { return false }
        return c.refreshToken != nil || isFresh(c, minimumValidity: 0)
    }

    func isFresh(_ c: StoredCredentials, minimumValidity: TimeInterval) -> Bool {
        guard c.accessToken != nil, let exp = c.accessTokenExpiry else { return false }
        return exp.timeIntervalSinceNow >= minimumValidity
    }

    // MARK: Restore and refresh

    /// Restores the previous sign-in without a browser, refreshing the tokens when the access token expires
    /// within `minimumValidity` seconds (or always when `forceRefresh`). See `restore(minimumValidity:forceRefresh:)`.
    public func restorePreviousSignIn(minimumValidity: TimeInterval = 60, forceRefresh: Bool = false) async throws(SignInError) -> User {
        try await offPool { () throws(SignInError) -> User in try self.restore(minimumValidity: minimumValidity, forceRefresh: forceRefresh) }
    }

    /// The synchronous body of `restorePreviousSignIn`, for callers that are not async (the CLI's cached path).
    ///
    /// 1. Nothing stored: `.noPreviousSignIn`.
    /// 2. The provider ended the grant (remembered from an earlier refresh): `.noPreviousSignIn` at once, no request.
    /// 3. The access token is valid for `minimumValidity` more seconds and no refresh is forced: the stored user,
    ///    with no network and no lock.
    /// 4. Otherwise, under this account's lock, read again: another process may have refreshed meanwhile (with a
    ///    rotating provider, the refresh token we read first is already spent). Its fresh result is used as is;
    ///    else this process refreshes (`refreshLocked`). Many parallel callers so cause one refresh.
    public func restore(minimumValidity: TimeInterval = 60, forceRefresh: Bool = false) throws(SignInError) -> User {
        guard let cached = try store.load(issuer: issuer, clientID: clientID) else {
            throw .noPreviousSignIn(reason: "nothing stored for \(issuer) and this client; run `signin login`")
        }
        if let ended = cached.grantEndedAt { throw .grantEnded(on: ended) }
        if !forceRefresh && isFresh(cached, minimumValidity: minimumValidity) { return User(cached, client: self) }
        let seen = cached.accessToken
        return try store.withLock(issuer: issuer, clientID: clientID) { () throws(SignInError) -> User in
            guard let current = try store.load(issuer: issuer, clientID: clientID) else {
                throw .noPreviousSignIn(reason: "signed out meanwhile")
            }
            if let ended = current.grantEndedAt { throw .grantEnded(on: ended) }
            let someoneElseRefreshed = current.accessToken != seen
            if isFresh(current, minimumValidity: minimumValidity) && (!forceRefresh || someoneElseRefreshed) {
                return User(current, client: self)
            }
            return try refreshLocked(current)
        }
    }

    /// Refreshes the tokens of `current`; the caller holds the account's lock.
    ///
    /// 1. No refresh token stored: `.noPreviousSignIn` (the provider issued none).
    /// 2. From sending the request until its answer is saved, SIGINT, SIGTERM and SIGHUP are held (`CriticalSection`).
    /// 3. The provider refuses the grant (`invalid_grant`): that and its date are saved in the entry (nothing is
    ///    deleted), then `.noPreviousSignIn`. Any other failure changes nothing.
    /// 4. A rotated refresh token is saved before anything else can fail, since the old one is already spent.
    /// 5. A new ID token must verify and name the same account (`sub`); profile fields it lacks are kept.
    /// 6. The new tokens are saved.
    private func refreshLocked(_ current: StoredCredentials) throws(SignInError) -> User {
        guard let refreshToken = current.refreshToken else {
            throw .noPreviousSignIn(reason: "cannot refresh: no refresh token is stored (the provider issued none); run `signin login`")
        }
        let tokens = TokenClient(config: configuration, endpoints: current.endpoints)
        return try CriticalSection.run { () throws(SignInError) -> User in
            let response: TokenResponse
            do throws(SignInError) {
                response = try tokens.refresh(refreshToken)
            } catch where error.isGrantRefused {
                // Under the lock we sent the newest refresh token, so the refusal is about the grant itself.
                var ended = current
                ended.grantEndedAt = Date()
                try store.save(ended)
                throw .grantEnded(on: ended.grantEndedAt!)
            }
            var next = current
            next.refreshToken = response.refreshToken ?? current.refreshToken
            if next.refreshToken != current.refreshToken { try store.save(next) }
            if let raw = response.idToken {
                let verified = try verifyIDToken(raw, endpoints: current.endpoints, nonce: nil)
                guard verified.subject == current.profile.userID else {
                    throw .invalidIDToken(reason: "the refreshed ID token is for another account (sub changed)")
                }
                var profile = verified.profile
                profile.fillMissing(from: current.profile)
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
    }

    // MARK: Interactive sign-in

    /// Signs in through the browser (or the device flow), verifies the ID token and stores the credentials.
    /// Cancel the surrounding task to stop waiting (the listener is closed and its port freed).
    public func signIn(hint: String? = nil, additionalScopes: [String] = [], options: SignInOptions = SignInOptions()) async throws(SignInError) -> User {
        let canceller = Canceller()
        var opts = options
        if let hint { opts.loginHint = hint }
        let o = opts
        let result: Result<User, SignInError> = await withTaskCancellationHandler {
            do throws(SignInError) {
                return .success(try await offPool { () throws(SignInError) -> User in try self.signInBlocking(additionalScopes: additionalScopes, options: o, canceller: canceller) })
            } catch {
                return .failure(error)
            }
        } onCancel: {
            canceller.cancel()
        }
        return try result.get()
    }

    func scopes(adding extra: [String]) -> [String] {
        var s = configuration.scopes
        for x in extra where !s.contains(x) { s.append(x) }
        return s
    }

    /// An interactive sign-in, decided in this order:
    ///
    /// 1. The store must be readable: one that cannot be read safely is never overwritten, so this fails before
    ///    any browser opens (`signOut()` removes it on purpose).
    /// 2. Discovery, or the configured endpoints, gives the provider's endpoints. The provider's signing keys are
    ///    fetched meanwhile, while the person is in the browser.
    /// 3. The grant: the device authorization grant (RFC 8628) when `options.useDeviceFlow`, else the
    ///    authorization code grant with PKCE through the browser and the loopback listener (`LoopbackAuthorization`).
    ///    Both end in a token response.
    /// 4. `complete`: the ID token must verify and, for incremental consent, name the required account; then the
    ///    credentials are saved. The browser, when it brought the code, is shown how it ended.
    func signInBlocking(additionalScopes: [String], options: SignInOptions, canceller: Canceller) throws(SignInError) -> User {
        let previous = try store.load(issuer: issuer, clientID: clientID)
        let http = HTTPClient(configuration: configuration)
        let endpoints = try Discovery.endpoints(for: configuration, http: http)
        let tokens = TokenClient(config: configuration, endpoints: endpoints)
        let scopes = scopes(adding: additionalScopes)
        let jwks = Prefetch { () throws(SignInError) -> JWKS in try JWKS.fetch(endpoints.jwks, http: http) }
        // Never return while it still runs: a program that exits then would tear down OpenSSL under it.
        defer { _ = jwks.value }
        let done = { (response: TokenResponse, nonce: String?) throws(SignInError) -> User in
            try self.complete(response, endpoints: endpoints, tokens: tokens, nonce: nonce, requestedScopes: scopes,
                              requireUserID: options.requireUserID, jwks: jwks.value, previous: previous)
        }
        if options.useDeviceFlow {
            let device = DeviceAuthorization(tokens: tokens, scopes: scopes)
            let response = try device.run(canceller: canceller, timeout: options.timeout) { onEvent(.deviceCode($0)) }
            return try CriticalSection.run { () throws(SignInError) -> User in try done(response, nil) }
        }
        let grant = try LoopbackAuthorization(configuration: configuration, endpoints: endpoints, scopes: scopes, options: options)
        do {
            let answer = try grant.awaitCode(configuration: configuration, endpoints: endpoints, options: options,
                                             environment: environment, canceller: canceller, onEvent: onEvent)
            onEvent(.exchangingCode)
            let user = try CriticalSection.run { () throws(SignInError) -> User in
                try done(try grant.exchange(answer, tokens: tokens), grant.request.nonce)
            }
            grant.finish(.success(account: user.profile.displayName, provider: issuer))
            return user
        } catch {
            grant.finish(.failure(error.description, provider: issuer))
            throw error
        }
    }

    /// Verifies the ID token of a fresh sign-in and saves the credentials under the lock.
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
        if profile.isMissingBasics, let info = try? tokens.userinfo(accessToken: response.accessToken) {
            profile.fillMissing(from: Profile(claims: info))
        }
        let sameAccount = previous?.profile.userID == verified.subject
        let creds = StoredCredentials(
            issuer: issuer, clientID: clientID,
            // Google omits the refresh token when one was already issued: keep the old one for the same account.
            refreshToken: response.refreshToken ?? (sameAccount && previous?.grantEndedAt == nil ? previous?.refreshToken : nil),
            accessToken: response.accessToken,
            accessTokenExpiry: response.expiresIn.map { Date(timeIntervalSinceNow: TimeInterval($0)) },
            idToken: raw, idTokenExpiry: verified.expiry, profile: profile,
            grantedScopes: response.scope ?? requestedScopes, endpoints: endpoints, savedAt: Date(), grantEndedAt: nil)
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
    public func signOut() throws(SignInError) -> Bool {
        try store.withLock(issuer: issuer, clientID: clientID) { () throws(SignInError) -> Bool in try store.remove(issuer: issuer, clientID: clientID) }
    }

    /// Revokes the grant at the provider (RFC 7009), then removes the local credentials. See `disconnectBlocking`.
    public func disconnect() async throws(SignInError) {
        try await offPool { () throws(SignInError) in try self.disconnectBlocking() }
    }

    /// Sign-out with revocation, under the account's lock:
    ///
    /// 1. Nothing stored: `.noPreviousSignIn`, nothing changed.
    /// 2. The revocation endpoint: the configuration's, else the one discovery gave at sign-in, else RFC 8414
    ///    metadata. None: `.unsupported`, and nothing changed (the person can still sign out without revoking).
    /// 3. Revoke the refresh token (which ends the whole grant), else the access token.
    /// 4. Remove the local credentials whatever the revocation's outcome; a failed revocation is then thrown as
    ///    `.revocationFailed`.
    func disconnectBlocking() throws(SignInError) {
        try store.withLock(issuer: issuer, clientID: clientID) { () throws(SignInError) in
            guard let c = try store.load(issuer: issuer, clientID: clientID) else {
                throw .noPreviousSignIn(reason: "nothing stored to revoke")
            }
            let http = HTTPClient(configuration: configuration)
            guard let url = configuration.endpoints.revocation ?? c.endpoints.revocation
                    ?? Discovery.revocationFromAuthorizationServerMetadata(issuer: issuer, http: http) else {
                throw .unsupported(reason: "The provider \(issuer) names no revocation endpoint (in OpenID discovery or RFC 8414 metadata), so the grant cannot be revoked; nothing was changed. Set \"revocation_endpoint\" in the configuration, or sign out without revoking.")
            }
            let tokens = TokenClient(config: configuration, endpoints: c.endpoints)
            var failure: SignInError?
            do throws(SignInError) {
                if let rt = c.refreshToken {
                    try tokens.revoke(token: rt, hint: "refresh_token", accessToken: c.accessToken, at: url)
                } else if let at = c.accessToken {
                    try tokens.revoke(token: at, hint: "access_token", accessToken: at, at: url)
                }
            } catch {
                failure = error
            }
            try store.remove(issuer: issuer, clientID: clientID)
            if let failure { throw .revocationFailed(cause: failure) }
        }
    }
}

extension SignInError {
    /// The provider refused the stored grant on `date` (revoked, expired, or a reused refresh token).
    public static func grantEnded(on date: Date) -> SignInError {
        .noPreviousSignIn(reason: "the provider ended this sign-in on \(date.formatted(.iso8601)) (it no longer accepts the stored grant); run `signin login`")
    }
}
