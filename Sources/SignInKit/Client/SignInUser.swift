import SignInBase
import SignInProtocol
import SignInStorage
import SignInGrant
import SignInTransport
import FoundationEssentials

/// The signed-in user, as GoogleSignIn's `GIDGoogleUser`: who it is, what was granted, and the tokens.
///
/// A value, a snapshot of the store when it was read: after a refresh (here or in another process) a held
/// `SignInUser` still shows the old tokens. `freshToken()` and `refreshTokensIfNeeded()` always answer from the
/// store; to show the current state in a UI, follow `SignInClient.currentUserUpdates()` (one value per change,
/// refreshes and other processes included), which costs nothing between changes, rather than reading
/// `client.currentUser` again (each read opens and decrypts the entry). Two users are equal when they say the
/// same thing (account, tokens and their expiry, scopes, profile, grant state, current or not): SwiftUI's
/// `onChange` can watch one.
public struct SignInUser: Sendable, Equatable {
    /// The provider's stable account identifier (`sub`).
    public var userID: String { profile.userID }
    /// Name, e-mail and picture, from the ID token (and userinfo).
    public let profile: SignInProfile
    /// Scopes the person actually granted (which may be fewer than were asked for).
    public let grantedScopes: [String]
    /// Where `profile` comes from: a verified ID token (an OpenID provider), the server's profile endpoint (a plain
    /// OAuth 2.0 server with a userinfo-like endpoint), or nowhere (the server says nothing of who signed in: the
    /// account is named by its API, `profile.userID`, or its server).
    public let identity: Identity

    /// Where a sign-in's identity comes from.
    public enum Identity: String, Sendable, Equatable {
        /// A verified ID token's claims.
        case idToken = "id_token"
        /// The server's profile (userinfo) endpoint, which the access token reached: not signed, but the server's word.
        case profileEndpoint = "userinfo"
        /// None: the server gives no identity.
        case none
    }
    /// The bearer token for APIs; see `freshAccessToken(minimumValidity:)`.
    public let accessToken: SignInToken?
    /// The long-lived grant; never needed by callers directly.
    public let refreshToken: SignInToken?
    /// What `currentUserUpdates()` compares to say a change once.
    struct State: Equatable {
        let userID: String
        let accessToken: String?
        let idToken: String?
        let grantedScopes: [String]
        let grantEndedAt: Date?
        let accessTokenRejected: Bool
        let profile: SignInProfile
    }

    var state: State {
        State(userID: userID, accessToken: accessToken?.value, idToken: idToken?.value, grantedScopes: grantedScopes, grantEndedAt: grantEndedAt,
              accessTokenRejected: accessTokenRejected, profile: profile)
    }

    /// The verified OpenID Connect ID token.
    public let idToken: SignInToken?
    /// The issuer this user signed in with.
    public let issuer: String
    /// When the provider refused this user's grant (revoked, expired, or a reused refresh token); nil while it is
    /// accepted. Such a user can no longer be restored: sign in again.
    public let grantEndedAt: Date?
    /// Whether this is the current account of its configuration (the one used when no account is named).
    public let isCurrent: Bool
    /// The provider's endpoints as they were at sign-in (the userinfo endpoint, for example): a program calls
    /// them with no discovery of its own.
    public let endpoints: ProviderEndpoints
    /// An API told this program the access token was no longer valid (`markAccessTokenRejected`): the next
    /// fresh token comes from a refresh.
    public let accessTokenRejected: Bool
    /// `DPoP` when the access token is bound to this machine's key (RFC 9449) and goes with a proof
    /// (`dpopProof(method:url:accessToken:)`, `Authorization: DPoP <token>`); else `Bearer`.
    public let accessTokenType: String
    /// The key the grant is bound to, as the entry keeps it; parsed only when a proof is made (never on a cached
    /// token's path). Never leaves SignInKit.
    let storedProofKey: String?
    /// Where the key of a DPoP-bound grant is: `tpm` (made inside the TPM; it never leaves it) or `store` (in the
    /// encrypted entry, under the store key); nil for a bearer grant.
    public var proofKeyCustody: String? { storedProofKey.map { ProofKey.isInTPM(stored: $0) ? "tpm" : "store" } }
    let client: SignInClient

    public static func == (a: SignInUser, b: SignInUser) -> Bool {
        a.state == b.state && a.isCurrent == b.isCurrent && a.issuer == b.issuer && a.endpoints == b.endpoints
            && a.accessToken == b.accessToken && a.idToken == b.idToken && a.refreshToken == b.refreshToken
    }

    init(_ c: StoredCredentials, client: SignInClient, isCurrent: Bool) {
        self.isCurrent = isCurrent
        profile = c.profile
        grantedScopes = c.grantedScopes
        identity = c.identitySource.flatMap(Identity.init(rawValue:)) ?? .idToken
        accessToken = c.accessToken.map { SignInToken(value: $0, expirationDate: c.accessTokenExpiry) }
        refreshToken = c.refreshToken.map { SignInToken(value: $0, expirationDate: nil) }
        idToken = c.idToken.map { SignInToken(value: $0, expirationDate: c.idTokenExpiry) }
        issuer = c.issuer
        grantEndedAt = c.grantEndedAt
        endpoints = c.endpoints
        accessTokenRejected = c.accessTokenRejectedAt != nil
        accessTokenType = c.accessTokenType == "DPoP" ? "DPoP" : "Bearer"
        storedProofKey = c.dpopKey
        self.client = client
    }

    /// `freshToken(minimumValidity:).value`: the access token alone, for code that does not need its expiry.
    public func freshAccessToken(minimumValidity: Duration = .seconds(60)) async throws(SignInError) -> String {
        try await freshToken(minimumValidity: minimumValidity).value
    }

    /// The access token with its expiry, valid for at least `minimumValidity` more, refreshing (once, across
    /// processes and callers) only when the stored one is about to expire or was marked rejected. The one to
    /// use; `accessToken` is the token as stored, which may have expired.
    nonisolated(nonsending) public func freshToken(minimumValidity: Duration = .seconds(60)) async throws(SignInError) -> SignInToken {
        let user = try await refreshTokensIfNeeded(minimumValidity: minimumValidity)
        guard let token = user.accessToken else { throw .noPreviousSignIn(reason: .noToken(.access)) }
        return token
    }

    /// An access token for one API: for `resource` alone (RFC 8707; one of the configuration's `resources`), or this
    /// user's token exchanged for `audience` (RFC 8693), kept in the entry until it expires. With neither, the grant's
    /// own token (`freshToken(minimumValidity:)`). A target the provider refuses is `.targetRefused`.
    nonisolated(nonsending) public func freshToken(resource: String?, audience: String?, minimumValidity: Duration = .seconds(60), forceRefresh: Bool = false) async throws(SignInError) -> SignInToken {
        guard resource != nil || audience != nil || forceRefresh else { return try await freshToken(minimumValidity: minimumValidity) }
        // A long-running program's cached call: answered from the entry kept in memory while the store's folder is
        // unchanged (`ResidentCredentials`), as `freshToken()` is: no thread, no file, no system call.
        if !forceRefresh, let kept = client.residentTargetedToken(account: userID, resource: resource, audience: audience, minimumValidity: minimumValidity) {
            return kept
        }
        var request = TokenRequest(audience: audience, minimumValidity: minimumValidity, forceRefresh: forceRefresh, account: userID)
        request.resource = resource
        let token = try await client.token(for: request).token
        // The entry as it is now (with this token), kept for the next call: a read of the store, no network.
        await client.keepResident(account: userID)
        return token
    }

    /// A DPoP proof (RFC 9449) for one request to a resource: its `method`, its `url` and the access token it
    /// presents (`ath`). Nil when this user's grant is not bound to a key (bearer tokens need none). Make one per
    /// request; the private key never leaves SignInKit.
    public func dpopProof(method: String, url: URL, accessToken: String) throws(SignInError) -> String? {
        guard let proofKey = try ProofKey.fromEntry(storedProofKey) else { return nil }
        return try DPoP.proof(proofKey, method: method, url: url.absoluteString, accessToken: accessToken)
    }

    /// The provider's userinfo (OpenID Core 5.3) for this user, with a fresh token, from the endpoint stored at
    /// sign-in (no discovery); the claims as the provider sent them (`claims["email"]?.string`,
    /// `claims["email_verified"]?.bool`, nested objects such as `address` as they are).
    public func userInfo() async throws(SignInError) -> [String: JSONValue] {
        let token = try await freshToken()
        // A DPoP-bound token goes with a proof (`Authorization: DPoP`), as the provider requires of it.
        return try await client.userInfo(accessToken: token.value, tokenType: accessTokenType,
                                         proofKey: accessTokenType == "DPoP" ? try ProofKey.fromEntry(storedProofKey) : nil, endpoints: endpoints)
    }

    /// The ID token, valid for at least `minimumValidity` more (refreshed when needed; a provider that sends no
    /// new ID token on refresh makes this `.noPreviousSignIn`, saying so).
    public func freshIDToken(minimumValidity: Duration = .seconds(60)) async throws(SignInError) -> SignInToken {
        let user = try await client.restorePreviousSignIn(account: userID, minimumValidity: minimumValidity, token: .id)
        guard let token = user.idToken else { throw .noPreviousSignIn(reason: .noToken(.id)) }
        return token
    }

    /// An API refused `token` (HTTP 401): the next `freshToken` refreshes first. Nothing changes when `token` is
    /// no longer the stored one (another caller refreshed already), so many callers reporting it cause one refresh.
    public func markAccessTokenRejected(_ token: String) throws(SignInError) {
        try client.markAccessTokenRejected(token, account: userID)
    }

    /// This user with tokens refreshed if the access token expires within `minimumValidity`.
    /// This user signed out meanwhile (by another client or process: its account is no longer stored) is
    /// `.noPreviousSignIn(.signedOutMeanwhile)`, as a sign-out during a refresh is, not `.accountNotFound`.
    nonisolated(nonsending) public func refreshTokensIfNeeded(minimumValidity: Duration = .seconds(60)) async throws(SignInError) -> SignInUser {
        do throws(SignInError) {
            return try await client.restorePreviousSignIn(account: userID, minimumValidity: minimumValidity)
        } catch .accountNotFound {
            throw .noPreviousSignIn(reason: .signedOutMeanwhile)
        } catch .noPreviousSignIn(.nothingStored), .noPreviousSignIn(.noStore) {
            throw .noPreviousSignIn(reason: .signedOutMeanwhile)
        }
    }

    /// Incremental consent: a new browser sign-in for these scopes plus the granted ones, hinted at this account.
    /// Throws `.scopesAlreadyGranted` when nothing is new, `.mismatchWithCurrentUser` (naming both people) if
    /// another account signs in, and `.scopesNotGranted` when the person (or the provider) granted fewer than
    /// asked: the sign-in is saved then, with what was granted (`currentUser` has it).
    public func addScopes(_ scopes: [String], options: SignInOptions = SignInOptions()) async throws(SignInError) -> SignInUser {
        let missing = scopes.filter { !grantedScopes.contains($0) }
        guard !missing.isEmpty else { throw .scopesAlreadyGranted }
        var opts = options
        opts.loginHint = profile.email ?? userID
        opts.requireUserID = userID
        opts.requiredAccountName = profile.displayName
        let user = try await client.signIn(additionalScopes: grantedScopes + missing, options: opts)
        let refused = missing.filter { !user.grantedScopes.contains($0) }
        if !refused.isEmpty { throw .scopesNotGranted(missing: refused) }
        return user
    }
}
