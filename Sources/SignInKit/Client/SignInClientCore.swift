import SignInBase
import SignInProtocol
import SignInStorage
import SignInGrant
import FoundationEssentials

/// What every `SignInClient` is, whatever provider families are built in: restore, sign in, sign out, accounts, the
/// one token path. Programs write their code against `SignInClientProtocol` (this and each family's protocol, composed
/// in `TokenFamilies.swift`, the one file that names the families); this part names no family. `SignInClient`
/// conforms; so can any type. A stand-in implements the first six requirements; the rest have defaults (one account,
/// no events, no updates after the first). (A program that wants the real client without a provider in its tests
/// can give it an `InMemoryCredentialStorage` seeded with fresh credentials.)
public protocol SignInClientCore: Sendable {
    /// The user type this client hands out.
    associatedtype User: SignInUserProtocol
    /// Whether `restorePreviousSignIn()` can succeed without a browser.
    var hasPreviousSignIn: Bool { get }
    /// The current user, or nil.
    var currentUser: User? { get }
    /// Restores the previous sign-in silently, refreshing when the token asked for expires within `minimumValidity`.
    func restorePreviousSignIn(account: String?, minimumValidity: Duration, forceRefresh: Bool, token: TokenKind) async throws(SignInError) -> User
    /// Signs in interactively.
    func signIn(hint: String?, additionalScopes: [String], options: SignInOptions) async throws(SignInError) -> User
    /// Signs the current account out here; true when one was signed in.
    @discardableResult
    func signOut() throws(SignInError) -> Bool
    /// Revokes the grant at the provider and signs out.
    func disconnect(account: String?) async throws(SignInError)

    /// Every stored account (default: the current user alone).
    func accounts() throws(SignInError) -> [User]
    /// Makes `account` (an e-mail or `sub`) current (default: the current user if it matches, else `.accountNotFound`).
    @discardableResult
    func switchAccount(to account: String) throws(SignInError) -> User
    /// Signs `account` out (default: the current user if it matches, else `.accountNotFound`).
    @discardableResult
    func signOut(account: String) throws(SignInError) -> User
    /// A sign-in whose progress can be iterated (default: `signIn` with no events).
    func signInWithEvents(hint: String?, additionalScopes: [String], options: SignInOptions) -> (events: AsyncStream<SignInEvent>, user: SignInOperation<User>)
    /// The current user now and at each change (default: the current user, then the stream ends).
    func currentUserUpdates() -> AsyncStream<User?>
    /// An API refused `token`: the next fresh token comes from a refresh (default: nothing to do).
    func markAccessTokenRejected(_ token: String, account: String?) throws(SignInError)
    /// The configuration the client signs in with (default, for a stand-in: a client ID `stand-in` at Google).
    var configuration: SignInConfiguration { get }
    /// A token through the one token path (default, for a stand-in: `.unsupported`).
    func token(for request: TokenRequest) async throws(SignInError) -> IssuedToken
}

extension SignInClientCore {
    /// The current account, restored silently, with an access token valid for at least a minute.
    public func restorePreviousSignIn() async throws(SignInError) -> User {
        try await restorePreviousSignIn(account: nil, minimumValidity: .seconds(60), forceRefresh: false, token: .access)
    }

    /// The account (an e-mail or `sub`; nil: the current one), restored silently.
    public func restorePreviousSignIn(account: String?) async throws(SignInError) -> User {
        try await restorePreviousSignIn(account: account, minimumValidity: .seconds(60), forceRefresh: false, token: .access)
    }

    /// The current account with its tokens refreshed now when `forceRefresh` (the provider's newest tokens).
    public func restorePreviousSignIn(forceRefresh: Bool) async throws(SignInError) -> User {
        try await restorePreviousSignIn(account: nil, minimumValidity: .seconds(60), forceRefresh: forceRefresh, token: .access)
    }

    /// Signs in interactively with the configuration's scopes.
    public func signIn() async throws(SignInError) -> User {
        try await signIn(hint: nil, additionalScopes: [], options: SignInOptions())
    }

    /// Signs in interactively with the configuration's scopes, as `options` say (browser, timeout, hint, device flow).
    public func signIn(options: SignInOptions) async throws(SignInError) -> User {
        try await signIn(hint: nil, additionalScopes: [], options: options)
    }

    /// The current account, restored silently, with an access token valid for at least `minimumValidity`.
    public func restorePreviousSignIn(minimumValidity: Duration) async throws(SignInError) -> User {
        try await restorePreviousSignIn(account: nil, minimumValidity: minimumValidity, forceRefresh: false, token: .access)
    }

    /// Revokes the current account's grant and signs it out.
    public func disconnect() async throws(SignInError) {
        try await disconnect(account: nil)
    }

    public func accounts() throws(SignInError) -> [User] { currentUser.map { [$0] } ?? [] }

    public func switchAccount(to account: String) throws(SignInError) -> User {
        guard let user = currentUser, user.matches(account) else { throw .accountNotFound(account: account, known: currentUser.map { [$0.profile.email ?? $0.userID] } ?? []) }
        return user
    }

    public func signOut(account: String) throws(SignInError) -> User {
        guard let user = currentUser, user.matches(account) else { throw .accountNotFound(account: account, known: currentUser.map { [$0.profile.email ?? $0.userID] } ?? []) }
        _ = try signOut()
        return user
    }

    public func signInWithEvents(hint: String? = nil, additionalScopes: [String] = [], options: SignInOptions = SignInOptions())
        -> (events: AsyncStream<SignInEvent>, user: SignInOperation<User>) {
        let (stream, continuation) = AsyncStream<SignInEvent>.makeStream()
        let task = Task { () async -> Result<User, SignInError> in
            defer { continuation.finish() }
            do throws(SignInError) { return .success(try await self.signIn(hint: hint, additionalScopes: additionalScopes, options: options)) } catch { return .failure(error) }
        }
        continuation.onTermination = { if case .cancelled = $0 { task.cancel() } }
        return (stream, SignInOperation(task: task))
    }

    public func currentUserUpdates() -> AsyncStream<User?> {
        let (stream, continuation) = AsyncStream<User?>.makeStream()
        continuation.yield(currentUser)
        continuation.finish()
        return stream
    }

    public func markAccessTokenRejected(_ token: String, account: String?) throws(SignInError) {}

    public var configuration: SignInConfiguration { SignInConfiguration(clientID: "stand-in").withKnownProviders }

    public func token(for request: TokenRequest) async throws(SignInError) -> IssuedToken {
        throw .unsupported(reason: "this stand-in for SignInClient gives no token through token(for:); implement it")
    }
}

/// What a program's code needs of a signed-in user (`SignInUser` conforms), so that its tests can stand in for one.
/// A stand-in implements `profile`, `grantedScopes`, `freshToken` and `userInfo`; the rest have defaults.
public protocol SignInUserProtocol: Sendable {
    /// Who it is.
    var profile: SignInProfile { get }
    /// The scopes granted.
    var grantedScopes: [String] { get }
    /// An access token valid for at least `minimumValidity` more.
    func freshToken(minimumValidity: Duration) async throws(SignInError) -> SignInToken
    /// The provider's userinfo for this user, the claims as the provider sent them.
    func userInfo() async throws(SignInError) -> [String: JSONValue]

    /// The provider's account identifier (`sub`) (default: the profile's).
    var userID: String { get }
    /// When the provider ended this user's grant (default: nil, never).
    var grantEndedAt: Date? { get }
    /// An ID token valid for at least `minimumValidity` more (default: none, `.noPreviousSignIn`).
    func freshIDToken(minimumValidity: Duration) async throws(SignInError) -> SignInToken
    /// An API refused `token`: the next fresh token comes from a refresh (default: nothing to do).
    func markAccessTokenRejected(_ token: String) throws(SignInError)
    /// Incremental consent for more scopes (default: `.unsupported`).
    func addScopes(_ scopes: [String], options: SignInOptions) async throws(SignInError) -> Self
    /// This user with tokens valid for at least `minimumValidity` more, refreshed only when needed (default: a
    /// fresh token is asked for, and the same user returned).
    func refreshTokensIfNeeded(minimumValidity: Duration) async throws(SignInError) -> Self
    /// A DPoP proof (RFC 9449) for one request presenting `accessToken`, or nil for bearer tokens. A requirement
    /// with a default (nil): stand-ins need not change.
    func dpopProof(method: String, url: URL, accessToken: String) throws(SignInError) -> String?
    /// `Bearer`, or `DPoP` for an access token bound to a key (default: `Bearer`).
    var accessTokenType: String { get }
    /// An access token for one API: for `resource` alone (RFC 8707), or exchanged for `audience` (RFC 8693), valid for
    /// `minimumValidity` more (default, for a stand-in: with neither, `freshToken(minimumValidity:)`; else `.unsupported`).
    func freshToken(resource: String?, audience: String?, minimumValidity: Duration, forceRefresh: Bool) async throws(SignInError) -> SignInToken
}

extension SignInUserProtocol {
    /// An access token valid for at least a minute.
    public func freshToken() async throws(SignInError) -> SignInToken {
        try await freshToken(minimumValidity: .seconds(60))
    }

    public var userID: String { profile.userID }
    public var grantEndedAt: Date? { nil }
    public func freshIDToken(minimumValidity: Duration) async throws(SignInError) -> SignInToken {
        throw .noPreviousSignIn(reason: .noToken(.id))
    }
    public func markAccessTokenRejected(_ token: String) throws(SignInError) {}
    public func addScopes(_ scopes: [String], options: SignInOptions) async throws(SignInError) -> Self {
        throw .unsupported(reason: "this user cannot ask for more scopes")
    }
    public func refreshTokensIfNeeded(minimumValidity: Duration) async throws(SignInError) -> Self {
        _ = try await freshToken(minimumValidity: minimumValidity)
        return self
    }

    /// This user with tokens valid for at least a minute more (`refreshTokensIfNeeded(minimumValidity:)`).
    public func refreshTokensIfNeeded() async throws(SignInError) -> Self {
        try await refreshTokensIfNeeded(minimumValidity: .seconds(60))
    }

    public var accessTokenType: String { "Bearer" }

    public func freshToken(resource: String?, audience: String?, minimumValidity: Duration, forceRefresh: Bool) async throws(SignInError) -> SignInToken {
        guard resource != nil || audience != nil || forceRefresh else { return try await freshToken(minimumValidity: minimumValidity) }
        throw .unsupported(reason: "this stand-in for SignInUser gives no token for one API; implement freshToken(resource:audience:minimumValidity:forceRefresh:)")
    }

    /// No proof: a user whose tokens are bearer tokens (stand-ins included).
    public func dpopProof(method: String, url: URL, accessToken: String) throws(SignInError) -> String? { nil }

    /// The headers that authorize one request to `url` with `method`: `Authorization: Bearer <token>`, or for a
    /// DPoP-bound grant `Authorization: DPoP <token>` and a fresh `DPoP` proof. The token is valid for at least
    /// `minimumValidity` more (refreshed only when needed).
    /// With `resource` or `audience`: the token for that API alone (`freshToken(resource:audience:...)`).
    public func authorizationHeaders(method: String, url: URL, minimumValidity: Duration = .seconds(60), resource: String? = nil,
                                     audience: String? = nil) async throws(SignInError) -> [String: String] {
        let token = try await freshToken(resource: resource, audience: audience, minimumValidity: minimumValidity, forceRefresh: false).value
        return try authorizationHeaders(token: token, method: method, url: url)
    }

    /// The headers that present `token` for one request (see `authorizationHeaders(method:url:minimumValidity:)`).
    public func authorizationHeaders(token: String, method: String, url: URL) throws(SignInError) -> [String: String] {
        guard let proof = try dpopProof(method: method, url: url, accessToken: token) else { return ["Authorization": "Bearer " + token] }
        return ["Authorization": "DPoP " + token, "DPoP": proof]
    }

    /// The value of an `Authorization` header for the provider's APIs (`Bearer <token>`), with a token valid for
    /// at least `minimumValidity` more (refreshed only when needed); set it on a `URLRequest` or any HTTP client's
    /// request. With URLSession, `SignInKitURLSession`'s `perform` also retries once when the token is refused.
    /// A DPoP-bound user (`accessTokenType` `DPoP`) needs a proof per request, which one header cannot carry:
    /// `.unsupported`, naming `authorizationHeaders(method:url:)`, which gives both headers.
    public func authorizationHeaderValue(minimumValidity: Duration = .seconds(60)) async throws(SignInError) -> String {
        guard accessTokenType != "DPoP" else {
            throw .unsupported(reason: "this user's access token is bound to a key (DPoP): each request needs `Authorization: DPoP` and a proof; use authorizationHeaders(method:url:)")
        }
        return "Bearer " + (try await freshToken(minimumValidity: minimumValidity)).value
    }

    /// Whether `account` names this user: its `sub`, or its e-mail (case-insensitive).
    func matches(_ account: String) -> Bool {
        account == userID || profile.email.map { $0.lowercased() == account.lowercased() } == true
    }
}

extension SignInUser: SignInUserProtocol {}
