import FoundationEssentials

/// Which token a caller needs fresh.
public enum TokenKind: Sendable {
    /// The OAuth access token, for APIs.
    case access
    /// The OpenID Connect ID token, for services that take one (Kubernetes' OIDC authenticator, Cloud Run).
    case id
}

/// The signed-in user, as GoogleSignIn's `GIDGoogleUser`: who it is, what was granted, and the tokens.
public struct SignInUser: Sendable {
    /// The provider's stable account identifier (`sub`).
    public var userID: String { profile.userID }
    /// Name, e-mail and picture, from the ID token (and userinfo).
    public let profile: SignInProfile
    /// Scopes the person actually granted (which may be fewer than were asked for).
    public let grantedScopes: [String]
    /// The bearer token for APIs; see `freshAccessToken(minimumValidity:)`.
    public let accessToken: SignInToken?
    /// The long-lived grant; never needed by callers directly.
    public let refreshToken: SignInToken?
    /// The verified OpenID Connect ID token.
    public let idToken: SignInToken?
    /// The issuer this user signed in with.
    public let issuer: String
    /// When the provider refused this user's grant (revoked, expired, or a reused refresh token); nil while it is
    /// accepted. Such a user can no longer be restored: sign in again.
    public let grantEndedAt: Date?
    /// Whether this is the current account of its configuration (the one used when no account is named).
    public let isCurrent: Bool
    let client: SignInClient

    init(_ c: StoredCredentials, client: SignInClient, isCurrent: Bool) {
        self.isCurrent = isCurrent
        profile = c.profile
        grantedScopes = c.grantedScopes
        accessToken = c.accessToken.map { SignInToken(value: $0, expirationDate: c.accessTokenExpiry) }
        refreshToken = c.refreshToken.map { SignInToken(value: $0, expirationDate: nil) }
        idToken = c.idToken.map { SignInToken(value: $0, expirationDate: c.idTokenExpiry) }
        issuer = c.issuer
        grantEndedAt = c.grantEndedAt
        self.client = client
    }

    /// An access token valid for at least `minimumValidity` more, refreshing (once, across processes) only when
    /// the stored one is about to expire.
    public func freshAccessToken(minimumValidity: Duration = .seconds(60)) async throws(SignInError) -> String {
        try await freshToken(minimumValidity: minimumValidity).value
    }

    /// The access token with its expiry, valid for at least `minimumValidity` more (refreshed only when needed).
    public func freshToken(minimumValidity: Duration = .seconds(60)) async throws(SignInError) -> SignInToken {
        let user = try await refreshTokensIfNeeded(minimumValidity: minimumValidity)
        guard let token = user.accessToken else { throw .noPreviousSignIn(reason: .noToken(.access)) }
        return token
    }

    /// The provider's userinfo (OpenID Core 5.3) for this user, with a fresh token; the claims as the provider
    /// sent them, strings, numbers and booleans as text.
    public func userInfo() async throws(SignInError) -> [String: String] {
        let token = try await freshToken()
        return try await client.userInfo(accessToken: token.value)
    }

    /// This user with tokens refreshed if the access token expires within `minimumValidity`.
    public func refreshTokensIfNeeded(minimumValidity: Duration = .seconds(60)) async throws(SignInError) -> SignInUser {
        try await client.restorePreviousSignIn(account: userID, minimumValidity: minimumValidity)
    }

    /// Incremental consent: a new browser sign-in for these scopes plus the granted ones, hinted at this account.
    /// Throws `.scopesAlreadyGranted` when nothing is new, `.mismatchWithCurrentUser` if another account signs in.
    public func addScopes(_ scopes: [String], options: SignInOptions = SignInOptions()) async throws(SignInError) -> SignInUser {
        let missing = scopes.filter { !grantedScopes.contains($0) }
        guard !missing.isEmpty else { throw .scopesAlreadyGranted }
        var opts = options
        opts.loginHint = profile.email ?? userID
        opts.requireUserID = userID
        return try await client.signIn(additionalScopes: grantedScopes + missing, options: opts)
    }
}
