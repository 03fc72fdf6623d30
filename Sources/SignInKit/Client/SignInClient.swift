import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Google Sign-In's `GIDSignIn` for Swift programs on Linux: sign in through the browser, restore the previous
/// sign-in silently, hand out fresh access tokens, sign out and disconnect.
///
/// ```swift
/// let client = SignInClient(configuration: try SignInConfiguration.load(path: "config.json"))
/// let user = client.hasPreviousSignIn ? try await client.restorePreviousSignIn() : try await client.signIn()
/// print(user.profile.displayName)
/// ```
public final class SignInClient: Sendable {
    /// The client and provider this instance signs in with.
    public let configuration: SignInConfiguration
    /// Where credentials are kept: the encrypted `CredentialStore` unless the program gave its own.
    public let storage: any CredentialStorage
    let environment: [String: String]
    let onEvent: @Sendable (SignInEvent) -> Void
    let observers = CurrentUserObservers()
    /// The endpoints discovered once in this process (a sign-in, `discoverEndpoints()`).
    let discovered = Locked<ProviderEndpoints?>(nil)

    /// - Parameters:
    ///   - storeDirectory: defaults to `$XDG_DATA_HOME/signin` (`~/.local/share/signin`).
    ///   - environment: where `$BROWSER`, `$HOME` and friends are read; defaults to the process environment.
    ///   - onEvent: called (on any thread) as a sign-in progresses.
    ///   - passphrase: asked when the store's key is under a passphrase (`key_storage: passphrase`).
    ///   - appName: a program's own name: its credentials then live in `$XDG_DATA_HOME/<appName>` (apart from the
    ///     `signin` command's and other programs'), unless `storeDirectory` says otherwise.
    public init(configuration: SignInConfiguration, storeDirectory: String? = nil, environment: [String: String]? = nil,
                onEvent: @escaping @Sendable (SignInEvent) -> Void = { _ in }, passphrase: PassphraseProvider? = nil, appName: String? = nil) {
        let env = environment ?? ProcessEnvironment.current
        self.configuration = configuration
        self.environment = env
        var custody = KeyCustody(storage: configuration.keyStorage, cacheDuration: configuration.keyCacheDuration, passphrase: passphrase,
                                 sessionBusAvailable: !(env["DBUS_SESSION_BUS_ADDRESS"] ?? "").isEmpty)
        custody.configurationPath = configuration.sourcePath
        let directory = storeDirectory ?? CredentialStore.defaultDirectory(environment: env, appName: appName ?? "signin")
        self.storage = CredentialStore(directory: directory, custody: custody)
        self.onEvent = onEvent
    }

    /// A client that keeps its credentials in `storage`: an `InMemoryCredentialStorage` in a program's tests, or a
    /// program's own `CredentialStorage`.
    public init(configuration: SignInConfiguration, storage: any CredentialStorage, environment: [String: String]? = nil,
                onEvent: @escaping @Sendable (SignInEvent) -> Void = { _ in }) {
        self.configuration = configuration
        self.environment = environment ?? ProcessEnvironment.current
        self.storage = storage
        self.onEvent = onEvent
    }

    /// The encrypted file store, when that is where this client keeps credentials (for its folder and key).
    public var credentialStore: CredentialStore? { storage as? CredentialStore }

    var issuer: String { configuration.issuer }
    var clientID: String { configuration.clientID }

    // MARK: The provider

    /// The provider's endpoints, from discovery (or the configuration's overrides). Blocks on the network.
    public func discoverEndpoints() throws(SignInError) -> ProviderEndpoints {
        if let known = discovered.withLock({ $0 }) { return known }
        let endpoints = try Discovery.endpoints(for: configuration, http: HTTPClient(configuration: configuration))
        discovered.withLock { $0 = endpoints }
        return endpoints
    }

    /// The endpoints already discovered in this process, if any (no network).
    var knownEndpoints: ProviderEndpoints? { discovered.withLock { $0 } }

    /// Whether the provider, as discovered in this process, offers the device flow (nil: not discovered yet).
    @_spi(CLI) public var offersDeviceFlow: Bool? { knownEndpoints.map { $0.deviceAuthorization != nil } }

    /// The provider's userinfo for an access token (see `SignInUser.userInfo()`).
    func userInfo(accessToken: String) async throws(SignInError) -> [String: String] {
        try await offPool { (_) throws(SignInError) -> [String: String] in
            let o = try TokenClient(config: self.configuration, endpoints: try self.discoverEndpoints()).userinfo(accessToken: accessToken)
            var out: [String: String] = [:]
            for (k, v) in o {
                switch v {
                case .string(let x): out[k] = x
                case .bool(let b): out[k] = b ? "true" : "false"
                case .number(let n): out[k] = n.rounded() == n && abs(n) < 1e15 ? String(Int(n)) : String(n)
                default: continue
                }
            }
            return out
        }
    }

    /// A sign-in whose progress arrives as an `AsyncSequence`, in order, ending when the sign-in ends; iterate it
    /// from any actor (a `@MainActor` UI included). `user` is the sign-in itself: await its value (or cancel it).
    public func signInWithEvents(hint: String? = nil, additionalScopes: [String] = [], options: SignInOptions = SignInOptions())
        -> (events: AsyncStream<SignInEvent>, user: Task<SignInUser, any Error>) {
        let (stream, continuation) = AsyncStream<SignInEvent>.makeStream(bufferingPolicy: .unbounded)
        let task = Task { () async throws -> SignInUser in
            defer { continuation.finish() }
            return try await self.signIn(hint: hint, additionalScopes: additionalScopes, options: options) { continuation.yield($0) }
        }
        return (stream, task)
    }

    /// The current user now, then again each time it changes through this client: a sign-in, a sign-out, a
    /// switch of account (nil: no one is signed in). For a UI that shows who is signed in without re-reading.
    public func currentUserUpdates() -> AsyncStream<SignInUser?> {
        let (stream, continuation) = AsyncStream<SignInUser?>.makeStream(bufferingPolicy: .bufferingNewest(8))
        continuation.yield(currentUser)
        observers.add(continuation)
        return stream
    }

    func currentUserChanged() { observers.send(currentUser) }

    // MARK: Accounts (offline)

    /// The current account's stored user, without network (also when the provider has ended its grant: see
    /// `SignInUser.grantEndedAt`); with `account` (an e-mail or `sub`), that account's. Nil when nothing is stored or no
    /// account is current. Throws when the store cannot be trusted, or `account` names no account or several.
    public func storedUser(account: String? = nil) throws(SignInError) -> SignInUser? {
        guard let c = try credentials(account: account) else { return nil }
        return SignInUser(c, client: self, isCurrent: account == nil || c.profile.userID == (try? currentSubject()))
    }

    /// `storedUser(account:)`, but no user is an error that says why: nothing stored, or accounts stored and
    /// none current (the same error `restorePreviousSignIn()` throws).
    public func signedInUser(account: String? = nil) throws(SignInError) -> SignInUser {
        guard let user = try storedUser(account: account) else { throw noAccount() }
        return user
    }

    /// The current user, or nil (also when the store is unreadable; use `storedUser()` to learn why).
    public var currentUser: SignInUser? { try? storedUser() }

    /// Whether a previous sign-in of the current account is stored that `restorePreviousSignIn()` can use without
    /// a browser: false when nothing is stored, no account is current, the store cannot be read, or the provider
    /// has ended the grant.
    public var hasPreviousSignIn: Bool {
        guard let c = try? storage.currentCredentials(issuer: issuer, clientID: clientID), c.grantEndedAt == nil else { return false }
        return c.refreshToken != nil || isFresh(c, minimumValidity: .zero)
    }

    /// Every account signed in with this configuration, the current one marked (`SignInUser.isCurrent`).
    public func accounts() throws(SignInError) -> [SignInUser] {
        let current = try currentSubject()
        return try allCredentials().map { SignInUser($0, client: self, isCurrent: $0.profile.userID == current) }
    }

    /// Makes `account` (an e-mail or `sub`) the current account: the one `restorePreviousSignIn()`, `currentUser`
    /// and the CLI's commands use when no account is named.
    @discardableResult
    public func switchAccount(to account: String) throws(SignInError) -> SignInUser {
        let c = try resolve(account)
        try storage.withExclusiveAccess(issuer: issuer, clientID: clientID, subject: nil) { () throws(SignInError) in
            try storage.makeCurrent(subject: c.profile.userID, issuer: issuer, clientID: clientID)
        }
        currentUserChanged()
        return SignInUser(c, client: self, isCurrent: true)
    }

    func currentSubject() throws(SignInError) -> String? {
        try storage.currentCredentials(issuer: issuer, clientID: clientID)?.profile.userID
    }

    func allCredentials() throws(SignInError) -> [StoredCredentials] {
        try storage.allCredentials(issuer: issuer, clientID: clientID)
    }

    /// The credentials `account` names (e-mail, case-insensitive, or `sub`), else the current account's.
    func credentials(account: String?) throws(SignInError) -> StoredCredentials? {
        guard let account else { return try storage.currentCredentials(issuer: issuer, clientID: clientID) }
        return try resolve(account)
    }

    /// The one stored account `account` names; an error listing what is stored when it names none or several.
    func resolve(_ account: String) throws(SignInError) -> StoredCredentials {
        let all = try allCredentials()
        // One account by its `sub` and another by its e-mail is two accounts: ambiguous, never a silent choice.
        let matches = all.filter { $0.profile.userID == account || $0.profile.email?.lowercased() == account.lowercased() }
        let known = all.map { $0.profile.displayName + " (sub \($0.profile.userID))" }
        guard matches.count == 1 else {
            if matches.isEmpty { throw .accountNotFound(account: account, known: known) }
            throw .ambiguousAccount(account: account, matches: matches.map { $0.profile.displayName + " (sub \($0.profile.userID))" })
        }
        return matches[0]
    }

    /// Why there is no account to use: nothing stored, or accounts stored but none current.
    func noAccount() -> SignInError {
        let others = (try? allCredentials()) ?? []
        if others.isEmpty { return .noPreviousSignIn(reason: .nothingStored(issuer: issuer)) }
        return .noPreviousSignIn(reason: .noCurrentAccount(stored: others.map { $0.profile.email ?? $0.profile.userID }))
    }

    func isFresh(_ c: StoredCredentials, minimumValidity: Duration, token: TokenKind = .access) -> Bool {
        let minimumValidity = minimumValidity.timeInterval
        switch token {
        case .access:
            guard c.accessToken != nil, let exp = c.accessTokenExpiry else { return false }
            return exp.timeIntervalSinceNow >= minimumValidity
        case .id:
            guard c.idToken != nil, let exp = c.idTokenExpiry else { return false }
            return exp.timeIntervalSinceNow >= minimumValidity
        }
    }

    /// Makes the next `restore` refresh before handing out an access token: for a caller told by an API that the
    /// token was rejected (git's `erase`). Only when `rejected` is the stored access token (compared in constant
    /// time), so a late report about an older token changes nothing.
    public func markAccessTokenRejected(_ rejected: String, account: String? = nil) throws(SignInError) {
        guard let c = try credentials(account: account) else { return }
        let subject = c.profile.userID
        try storage.withExclusiveAccess(issuer: issuer, clientID: clientID, subject: subject) { () throws(SignInError) in
            guard var current = try storage.credentials(issuer: issuer, clientID: clientID, subject: subject),
                  let token = current.accessToken, Crypto.constantTimeEqual(token, rejected) else { return }
            current.accessTokenExpiry = Date(timeIntervalSince1970: 0)
            try storage.save(current)
        }
    }

    // MARK: Restore and refresh

    /// Restores the previous sign-in without a browser, refreshing the tokens when the access token expires
    /// within `minimumValidity` (or always when `forceRefresh`). See `restore(minimumValidity:forceRefresh:)`.
    public func restorePreviousSignIn(account: String? = nil, minimumValidity: Duration = .seconds(60), forceRefresh: Bool = false,
                                      token: TokenKind = .access) async throws(SignInError) -> SignInUser {
        try await offPool { (_) throws(SignInError) -> SignInUser in
            try self.restore(account: account, minimumValidity: minimumValidity, forceRefresh: forceRefresh, token: token)
        }
    }

    /// The synchronous body of `restorePreviousSignIn`, for callers that are not async (the CLI's cached path).
    ///
    /// 1. The account: `account` (an e-mail or `sub`) when given, else the current one. Nothing stored, or no
    ///    account current: `.noPreviousSignIn`.
    /// 2. The provider ended the grant (remembered from an earlier refresh): `.noPreviousSignIn` at once, no request.
    /// 3. The token asked for (`token`: the access token, or the ID token) is valid for `minimumValidity` more
    ///    and no refresh is forced: the stored user, with no network and no lock.
    /// 4. Otherwise, under this account's lock (other accounts do not wait), read again: another process may have
    ///    refreshed meanwhile (with a rotating provider, the refresh token we read first is already spent). Its
    ///    fresh result is used as is; else this process refreshes (`refreshLocked`). Many parallel callers so
    ///    cause one refresh. When the ID token was asked for and the refresh brought none, that is an error
    ///    (`.noPreviousSignIn`: only a new sign-in gives one), after the refreshed tokens are saved.
    public func restore(account: String? = nil, minimumValidity: Duration = .seconds(60), forceRefresh: Bool = false,
                        token: TokenKind = .access) throws(SignInError) -> SignInUser {
        guard let cached = try credentials(account: account) else { throw noAccount() }
        let isCurrent = account == nil || cached.profile.userID == (try? currentSubject())
        if let ended = cached.grantEndedAt { throw .grantEnded(on: ended) }
        if !forceRefresh && isFresh(cached, minimumValidity: minimumValidity, token: token) { return SignInUser(cached, client: self, isCurrent: isCurrent) }
        let seen = cached.accessToken
        let subject = cached.profile.userID
        return try storage.withExclusiveAccess(issuer: issuer, clientID: clientID, subject: subject) { () throws(SignInError) -> SignInUser in
            guard let current = try storage.credentials(issuer: issuer, clientID: clientID, subject: subject) else {
                throw .noPreviousSignIn(reason: .signedOutMeanwhile)
            }
            if let ended = current.grantEndedAt { throw .grantEnded(on: ended) }
            let someoneElseRefreshed = current.accessToken != seen
            if isFresh(current, minimumValidity: minimumValidity, token: token) && (!forceRefresh || someoneElseRefreshed) {
                return SignInUser(current, client: self, isCurrent: isCurrent)
            }
            let next = try refreshLocked(current)
            if token == .id && next.idToken == current.idToken {
                throw .noPreviousSignIn(reason: .noNewIDToken(storedExpiry: next.idTokenExpiry))
            }
            return SignInUser(next, client: self, isCurrent: isCurrent)
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
    private func refreshLocked(_ current: StoredCredentials) throws(SignInError) -> StoredCredentials {
        guard let refreshToken = current.refreshToken else {
            throw .noPreviousSignIn(reason: .noRefreshToken)
        }
        let tokens = TokenClient(config: configuration, endpoints: current.endpoints)
        return try CriticalSection.run { () throws(SignInError) -> StoredCredentials in
            let response: TokenResponse
            do throws(SignInError) {
                response = try tokens.refresh(refreshToken)
            } catch where error.isGrantRefused {
                // Under the lock we sent the newest refresh token, so the refusal is about the grant itself.
                var ended = current
                ended.grantEndedAt = Date()
                try storage.save(ended)
                throw .grantEnded(on: ended.grantEndedAt!)
            }
            var next = current
            next.refreshToken = response.refreshToken ?? current.refreshToken
            if next.refreshToken != current.refreshToken { try storage.save(next) }
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
            try storage.save(next)
            return next
        }
    }

    // MARK: Interactive sign-in

    /// Signs in through the browser (or the device flow), verifies the ID token and stores the credentials.
    /// Cancel the surrounding task to stop at once, wherever it waits (the browser, discovery, the code
    /// exchange): it throws `.canceled`, the listener is closed and its port freed.
    public func signIn(hint: String? = nil, additionalScopes: [String] = [], options: SignInOptions = SignInOptions()) async throws(SignInError) -> SignInUser {
        try await signIn(hint: hint, additionalScopes: additionalScopes, options: options) { _ in }
    }

    /// `signIn` whose events also go to `alsoTo` (besides the client's `onEvent`): one sign-in's own observer.
    func signIn(hint: String?, additionalScopes: [String], options: SignInOptions,
                alsoTo extra: @escaping @Sendable (SignInEvent) -> Void) async throws(SignInError) -> SignInUser {
        var opts = options
        if let hint { opts.loginHint = hint }
        let o = opts
        let emit: @Sendable (SignInEvent) -> Void = { event in
            self.onEvent(event)
            extra(event)
        }
        return try await offPool { (canceller) throws(SignInError) -> SignInUser in
            try self.signInBlocking(additionalScopes: additionalScopes, options: o, canceller: canceller, emit: emit)
        }
    }

    func scopes(adding extra: [String]) -> [String] {
        var s = configuration.scopes
        for x in extra where !s.contains(x) { s.append(x) }
        return s
    }

    /// An interactive sign-in, decided in this order:
    ///
    /// 1. The store must be readable: one that cannot be read safely is never overwritten, so this fails before
    ///    any browser opens (`signOut()` removes it on purpose). Other accounts stay as they are. Its key must be
    ///    where the configuration says (created now if there is none, a new passphrase asked for now).
    /// 2. Discovery, or the configured endpoints, gives the provider's endpoints. The provider's signing keys are
    ///    fetched meanwhile, while the person is in the browser.
    /// 3. The grant: the device authorization grant (RFC 8628) when `options.useDeviceFlow`, else the
    ///    authorization code grant with PKCE through the browser and the loopback listener (`LoopbackAuthorization`).
    ///    Both end in a token response.
    /// 4. `complete`: the ID token must verify and, for incremental consent, name the required account; then the
    ///    account is added (or updated) and made current. The browser, when it brought the code, is shown how it ended.
    func signInBlocking(additionalScopes: [String], options: SignInOptions, canceller: Canceller,
                        emit: @escaping @Sendable (SignInEvent) -> Void) throws(SignInError) -> SignInUser {
        _ = try allCredentials()
        // The key where the configuration says it goes, before anyone signs in for nothing.
        try credentialStore?.prepareKey()
        let http = HTTPClient(configuration: configuration)
        let endpoints: ProviderEndpoints
        if let known = knownEndpoints { endpoints = known } else { endpoints = try Discovery.endpoints(for: configuration, http: http) }
        discovered.withLock { $0 = endpoints }
        let tokens = TokenClient(config: configuration, endpoints: endpoints)
        let scopes = scopes(adding: additionalScopes)
        let jwks = Prefetch { () throws(SignInError) -> JWKS in try JWKS.fetch(endpoints.jwks, http: http) }
        // Never return while it still runs: a program that exits then would tear down OpenSSL under it.
        defer { _ = jwks.value }
        let done = { (response: TokenResponse, nonce: String?) throws(SignInError) -> SignInUser in
            try self.complete(response, endpoints: endpoints, tokens: tokens, nonce: nonce, requestedScopes: scopes,
                              requireUserID: options.requireUserID, jwks: jwks.value)
        }
        if options.useDeviceFlow {
            let device = DeviceAuthorization(tokens: tokens, scopes: scopes)
            let response = try device.run(canceller: canceller, timeout: options.timeoutSeconds) { emit(.deviceCode($0)) }
            return try CriticalSection.run { () throws(SignInError) -> SignInUser in try done(response, nil) }
        }
        let grant = try LoopbackAuthorization(configuration: configuration, endpoints: endpoints, scopes: scopes, options: options)
        do {
            let answer = try grant.awaitCode(configuration: configuration, endpoints: endpoints, options: options,
                                             environment: environment, canceller: canceller, onEvent: emit)
            emit(.exchangingCode)
            let user = try CriticalSection.run { () throws(SignInError) -> SignInUser in
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
    private func complete(_ response: TokenResponse, endpoints: ProviderEndpoints, tokens: TokenClient, nonce: String?, requestedScopes: [String],
                          requireUserID: String?, jwks: JWKS?) throws(SignInError) -> SignInUser {
        guard let raw = response.idToken else {
            throw .providerError(endpoint: tokens.tokenEndpointName, code: "invalid_response", detail: "no id_token (is \"openid\" among the scopes?)")
        }
        let verified = try verifyIDToken(raw, endpoints: endpoints, nonce: nonce, prefetched: jwks)
        if let required = requireUserID, verified.subject != required {
            throw .mismatchWithCurrentUser(expected: required, actual: verified.profile.displayName)
        }
        var profile = verified.profile
        if profile.isMissingBasics, let info = try? tokens.userinfo(accessToken: response.accessToken) {
            profile.fillMissing(from: SignInProfile(claims: info))
        }
        let subject = verified.subject
        let creds = try storage.withExclusiveAccess(issuer: issuer, clientID: clientID, subject: subject) { () throws(SignInError) -> StoredCredentials in
            let previous = try storage.credentials(issuer: issuer, clientID: clientID, subject: subject)
            let creds = StoredCredentials(
                issuer: issuer, clientID: clientID,
                // Google omits the refresh token when one was already issued: keep the old one of this account.
                refreshToken: response.refreshToken ?? (previous?.grantEndedAt == nil ? previous?.refreshToken : nil),
                accessToken: response.accessToken,
                accessTokenExpiry: response.expiresIn.map { Date(timeIntervalSinceNow: TimeInterval($0)) },
                idToken: raw, idTokenExpiry: verified.expiry, profile: profile,
                grantedScopes: response.scope ?? requestedScopes, endpoints: endpoints, savedAt: Date(), grantEndedAt: nil)
            try storage.save(creds)
            return creds
        }
        try storage.withExclusiveAccess(issuer: issuer, clientID: clientID, subject: nil) { () throws(SignInError) in
            try storage.makeCurrent(subject: subject, issuer: issuer, clientID: clientID)
        }
        currentUserChanged()
        return SignInUser(creds, client: self, isCurrent: true)
    }

    func verifyIDToken(_ raw: String, endpoints: ProviderEndpoints, nonce: String?, prefetched: JWKS? = nil) throws(SignInError) -> IDToken {
        let http = HTTPClient(configuration: configuration)
        let jwks: JWKS
        if let prefetched { jwks = prefetched } else { jwks = try JWKS.fetch(endpoints.jwks, http: http) }
        let expect = IDToken.Expectations(issuer: issuer, clientID: clientID, nonce: nonce, hostedDomain: configuration.hostedDomain)
        return try IDToken.verify(raw, jwks: jwks, refetch: { () throws(SignInError) -> JWKS in try JWKS.fetch(endpoints.jwks, http: http) }, expect: expect)
    }

    // MARK: Sign-out

    /// Signs the current account out: removes its credentials here (the grant at the provider remains; see
    /// `disconnect()`). Afterwards no account is current until `switchAccount(to:)` or a sign-in: another person's
    /// account is never made current silently. Returns false when no account was current.
    /// An entry that cannot be read (damaged, tampered with) is removed too: signing out is how a person
    /// replaces it, and it needs no decryption.
    @discardableResult
    public func signOut() throws(SignInError) -> Bool {
        let removed = try storage.withExclusiveAccess(issuer: issuer, clientID: clientID, subject: nil) { () throws(SignInError) -> Bool in
            try storage.removeCurrentCredentials(issuer: issuer, clientID: clientID)
        }
        credentialStore?.removeLeftoversIfEmpty()
        currentUserChanged()
        return removed
    }

    /// Signs out the account `account` (an e-mail or `sub`) and returns who it was.
    @discardableResult
    public func signOut(account: String) throws(SignInError) -> SignInUser {
        let c = try resolve(account)
        try remove(c)
        return SignInUser(c, client: self, isCurrent: false)
    }

    /// Signs out every account of this configuration and returns who they were.
    @discardableResult
    public func signOutAll() throws(SignInError) -> [SignInUser] {
        let all = try allCredentials()
        for c in all { try remove(c) }
        return all.map { SignInUser($0, client: self, isCurrent: false) }
    }

    /// Removes one account's entry under its lock, and the current-account pointer when it named that account.
    private func remove(_ c: StoredCredentials) throws(SignInError) {
        let subject = c.profile.userID
        try storage.withExclusiveAccess(issuer: issuer, clientID: clientID, subject: nil) { () throws(SignInError) in
            try storage.withExclusiveAccess(issuer: issuer, clientID: clientID, subject: subject) { () throws(SignInError) in
                _ = try storage.removeCredentials(issuer: issuer, clientID: clientID, subject: subject)
            }
        }
        credentialStore?.removeLeftoversIfEmpty()
        currentUserChanged()
    }

    /// Revokes the grant at the provider (RFC 7009), then removes the local credentials of the current account,
    /// or of `account`. See `disconnectBlocking`.
    public func disconnect(account: String? = nil) async throws(SignInError) {
        try await offPool { (_) throws(SignInError) in try self.disconnectBlocking(account: account) }
    }

    /// Sign-out with revocation:
    ///
    /// 1. The account: `account` when given, else the current one. None: `.noPreviousSignIn`, nothing changed.
    /// 2. The revocation endpoint: the configuration's, else the one discovery gave at sign-in, else RFC 8414
    ///    metadata. None: `.unsupported`, and nothing changed (the person can still sign out without revoking).
    /// 3. Revoke the refresh token (which ends the whole grant), else the access token.
    /// 4. Remove the local credentials whatever the revocation's outcome (a failed revocation is then thrown as
    ///    `.revocationFailed`), except when the caller cancelled: then nothing is removed and `.canceled` is thrown.
    func disconnectBlocking(account: String? = nil) throws(SignInError) {
        guard let c = try credentials(account: account) else { throw .noPreviousSignIn(reason: .nothingStored(issuer: issuer)) }
        let http = HTTPClient(configuration: configuration)
        let tokens = TokenClient(config: configuration, endpoints: c.endpoints)
        var failure: SignInError?
        do throws(SignInError) {
            // The provider down is a failed revocation (the local credentials still go), not a missing endpoint.
            guard let url = try revocationEndpoint(c, http: http) else { throw Self.noRevocationEndpoint(issuer) }
            if let rt = c.refreshToken {
                try tokens.revoke(token: rt, hint: "refresh_token", accessToken: c.accessToken, at: url)
            } else if let at = c.accessToken {
                try tokens.revoke(token: at, hint: "access_token", accessToken: at, at: url)
            }
        } catch .canceled(let reason) {
            throw .canceled(reason: reason)  // the caller stopped it: nothing is removed
        } catch .unsupported(let reason) {
            throw .unsupported(reason: reason)  // nowhere to revoke: nothing is removed
        } catch {
            failure = error
        }
        try remove(c)
        if let failure { throw .revocationFailed(cause: failure) }
    }

    /// Where the grant of `account` (or the current account) would be revoked: before asking a person, so that a
    /// provider with no revocation endpoint is refused first (`.unsupported`, nothing changed). Nil when the
    /// provider cannot be reached to find out (then `disconnect` removes the local credentials and reports it).
    @_spi(CLI) public func revocationEndpoint(account: String? = nil) throws(SignInError) -> String? {
        guard let c = try credentials(account: account) else { throw .noPreviousSignIn(reason: .nothingStored(issuer: issuer)) }
        do throws(SignInError) {
            guard let url = try revocationEndpoint(c, http: HTTPClient(configuration: configuration)) else { throw Self.noRevocationEndpoint(issuer) }
            return url
        } catch .networkUnavailable {
            return nil
        }
    }

    private func revocationEndpoint(_ c: StoredCredentials, http: HTTPClient) throws(SignInError) -> String? {
        if let known = configuration.endpoints.revocation ?? c.endpoints.revocation { return known }
        return try Discovery.revocationFromAuthorizationServerMetadata(issuer: issuer, http: http)
    }

    static func noRevocationEndpoint(_ issuer: String) -> SignInError {
        .unsupported(reason: "The provider \(issuer) names no revocation endpoint (in OpenID discovery or RFC 8414 metadata), so the grant cannot be revoked; nothing was changed. Set \"revocation_endpoint\" in the configuration, or sign out without revoking.")
    }
}

extension SignInError {
    /// The provider refused the stored grant on `date` (revoked, expired, or a reused refresh token).
    public static func grantEnded(on date: Date) -> SignInError {
        .noPreviousSignIn(reason: .grantEnded(on: date))
    }
}

/// Who watches `currentUserUpdates()`.
final class CurrentUserObservers: Sendable {
    private let continuations = Locked<[AsyncStream<SignInUser?>.Continuation]>([])

    func add(_ c: AsyncStream<SignInUser?>.Continuation) { continuations.withLock { $0.append(c) } }

    func send(_ user: SignInUser?) {
        continuations.withLock { list in
            list.removeAll { c in
                if case .terminated = c.yield(user) { return true }
                return false
            }
        }
    }
}
