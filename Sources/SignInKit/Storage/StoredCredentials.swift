import FoundationEssentials

/// What is kept between runs for one account of one client at one provider. `CredentialStore` keeps it
/// encrypted; a `CredentialStorage` of a program's own must keep it as secret as a password (`Codable` for that).
public struct StoredCredentials: Codable, Sendable, Equatable, CustomStringConvertible {
    /// The provider (issuer identifier).
    public var issuer: String
    /// The OAuth client.
    public var clientID: String
    /// The long-lived grant, when the provider gave one.
    public var refreshToken: String?
    /// The last access token.
    public var accessToken: String?
    /// When `accessToken` expires, if the provider said.
    public var accessTokenExpiry: Date?
    /// The last verified ID token.
    public var idToken: String?
    /// When `idToken` expires.
    public var idTokenExpiry: Date?
    /// Who it is; `profile.userID` (`sub`) names the account.
    public var profile: SignInProfile
    /// The scopes granted.
    public var grantedScopes: [String]
    /// The provider's endpoints at sign-in, so a refresh needs no discovery.
    public var endpoints: ProviderEndpoints
    /// When this was saved.
    public var savedAt: Date
    /// When the provider refused the stored grant (`invalid_grant` on a refresh). Kept, not deleted: the person
    /// learns what happened, and nothing is lost until they sign in again or out.
    public var grantEndedAt: Date?

    /// Credentials as a program's own storage or a test builds them.
    public init(issuer: String, clientID: String, refreshToken: String?, accessToken: String?, accessTokenExpiry: Date?,
                idToken: String?, idTokenExpiry: Date?, profile: SignInProfile, grantedScopes: [String], endpoints: ProviderEndpoints,
                savedAt: Date = Date(), grantEndedAt: Date? = nil) {
        self.issuer = issuer
        self.clientID = clientID
        self.refreshToken = refreshToken
        self.accessToken = accessToken
        self.accessTokenExpiry = accessTokenExpiry
        self.idToken = idToken
        self.idTokenExpiry = idTokenExpiry
        self.profile = profile
        self.grantedScopes = grantedScopes
        self.endpoints = endpoints
        self.savedAt = savedAt
        self.grantEndedAt = grantEndedAt
    }

    /// Never the tokens themselves.
    public var description: String {
        "StoredCredentials(\(issuer), sub \(profile.userID), refresh token: \(refreshToken == nil ? "no" : "yes"), access token until \(accessTokenExpiry.map { "\($0)" } ?? "?"))"
    }
}
