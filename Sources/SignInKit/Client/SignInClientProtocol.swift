/// What a program's code needs of a `SignInClient`, so that its own tests can stand in for one: write the code
/// against `some SignInClientProtocol` (or `any`), pass a `SignInClient` in the program and a fake in tests.
/// `SignInClient` conforms; so can any type. (A program that wants the real client without a provider in its tests
/// can give it an `InMemoryCredentialStorage` seeded with fresh credentials instead.)
public protocol SignInClientProtocol: Sendable {
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
}

extension SignInClientProtocol {
    /// The current account, restored silently, with an access token valid for at least a minute.
    public func restorePreviousSignIn() async throws(SignInError) -> User {
        try await restorePreviousSignIn(account: nil, minimumValidity: .seconds(60), forceRefresh: false, token: .access)
    }

    /// Signs in interactively with the configuration's scopes.
    public func signIn() async throws(SignInError) -> User {
        try await signIn(hint: nil, additionalScopes: [], options: SignInOptions())
    }

    /// Revokes the current account's grant and signs it out.
    public func disconnect() async throws(SignInError) {
        try await disconnect(account: nil)
    }
}

/// What a program's code needs of a signed-in user (`SignInUser` conforms), so that its tests can stand in for one.
public protocol SignInUserProtocol: Sendable {
    /// Who it is.
    var profile: SignInProfile { get }
    /// The scopes granted.
    var grantedScopes: [String] { get }
    /// An access token valid for at least `minimumValidity` more.
    func freshToken(minimumValidity: Duration) async throws(SignInError) -> SignInToken
    /// The provider's userinfo for this user.
    func userInfo() async throws(SignInError) -> [String: String]
}

extension SignInUserProtocol {
    /// An access token valid for at least a minute.
    public func freshToken() async throws(SignInError) -> SignInToken {
        try await freshToken(minimumValidity: .seconds(60))
    }

    /// The value of an `Authorization` header for the provider's APIs (`Bearer <token>`), with a token valid for
    /// at least `minimumValidity` more (refreshed only when needed); set it on a `URLRequest` or any HTTP client's
    /// request. This is GIDSignIn's fetcher authorizer without tying you to one HTTP stack.
    public func authorizationHeaderValue(minimumValidity: Duration = .seconds(60)) async throws(SignInError) -> String {
        "Bearer " + (try await freshToken(minimumValidity: minimumValidity)).value
    }
}

extension SignInClient: SignInClientProtocol {}
extension SignInUser: SignInUserProtocol {}
