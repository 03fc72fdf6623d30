import FoundationEssentials

/// What is kept between runs for one account, always encrypted on disk (see `CredentialStore`).
struct StoredCredentials: Codable, Sendable, Equatable, CustomStringConvertible {
    var issuer: String
    var clientID: String
    var refreshToken: String?
    var accessToken: String?
    var accessTokenExpiry: Date?
    var idToken: String?
    var idTokenExpiry: Date?
    var profile: SignInProfile
    var grantedScopes: [String]
    var endpoints: ProviderEndpoints
    var savedAt: Date
    /// When the provider refused the stored grant (`invalid_grant` on a refresh). Kept, not deleted: the person
    /// learns what happened, and nothing is lost until they sign in again or out.
    var grantEndedAt: Date?

    /// Never the tokens themselves.
    var description: String {
        "StoredCredentials(\(issuer), sub \(profile.userID), refresh token: \(refreshToken == nil ? "no" : "yes"), access token until \(accessTokenExpiry.map { "\($0)" } ?? "?"))"
    }
}
