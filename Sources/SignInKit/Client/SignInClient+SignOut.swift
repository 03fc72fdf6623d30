import SignInBase
import SignInProtocol
import SignInStorage
import SignInGrant
import SignInTransport
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Signing out, here only or with revocation at the provider (`disconnect`).
extension SignInClient {
    // MARK: Sign-out

    /// Signs the current account out: removes its credentials here (the grant at the provider remains; see
    /// `disconnect()`). Afterwards no account is current until `switchAccount(to:)` or a sign-in: another person's
    /// account is never made current silently. Returns false when no account was current.
    /// An entry that cannot be read (damaged, tampered with) is removed too: signing out is how a person
    /// replaces it, and it needs no decryption.
    @discardableResult
    public func signOut() throws(SignInError) -> Bool {
        let removed = try storage.withExclusiveAccess(for: identity, subject: nil) { () throws(SignInError) -> Bool in
            try storage.removeCurrentCredentials(for: identity)
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
    func remove(_ c: StoredCredentials) throws(SignInError) {
        let subject = c.profile.userID
        try storage.withExclusiveAccess(for: identity, subject: nil) { () throws(SignInError) in
            try storage.withExclusiveAccess(for: identity, subject: subject) { () throws(SignInError) in
                _ = try storage.removeCredentials(for: identity, subject: subject)
            }
        }
        credentialStore?.removeLeftoversIfEmpty()
        currentUserChanged()
    }

    /// Revokes the grant at the provider (RFC 7009), then removes the local credentials of the current account,
    /// or of `account`; as GoogleSignIn's `disconnect`, the local credentials go only once the provider confirmed
    /// the revocation, online and offline alike. See `disconnectBlocking`.
    public func disconnect(account: String? = nil) async throws(SignInError) {
        try await offPool("the revocation") { (_) throws(SignInError) in try self.disconnectBlocking(account: account) }
    }

    /// Sign-out with revocation:
    ///
    /// 1. The account: `account` when given, else the current one. None: `.noPreviousSignIn`, nothing changed.
    /// 2. The revocation endpoint: the configuration's, else the one discovery gave at sign-in, else RFC 8414
    ///    metadata. None: `.unsupported`, and nothing changed (the person can still sign out without revoking).
    /// 3. Revoke the refresh token (which ends the whole grant), else the access token.
    /// 4. The provider confirmed: the local credentials are removed. Any other outcome changes nothing here: the
    ///    provider unreachable or refusing is `.revocationFailed` (the cause inside), a cancel `.canceled`. So
    ///    after `disconnect` throws, the user is still signed in, whatever the network did; a caller that wants
    ///    the local credentials gone anyway calls `signOut(account:)` next (as `signin logout --revoke` does).
    func disconnectBlocking(account: String? = nil) throws(SignInError) {
        guard let c = try credentials(account: account) else { throw .noPreviousSignIn(reason: .nothingStored(issuer: issuer)) }
        let http = HTTPClient(configuration: configuration)
        var tokens = TokenClient(config: configuration, endpoints: c.endpoints)
        do throws(SignInError) {
            tokens.proofKey = try c.proofKey()
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
            throw .revocationFailed(cause: error)  // not revoked: nothing is removed
        }
        try remove(c)
    }

    /// Where the grant of `account` (or the current account) would be revoked: before asking a person, so that a
    /// provider with no revocation endpoint is refused first (`.unsupported`, nothing changed). Nil when the
    /// provider cannot be reached to find out (then `disconnect` removes the local credentials and reports it).
    package func revocationEndpoint(account: String? = nil) throws(SignInError) -> String? {
        guard let c = try credentials(account: account) else { throw .noPreviousSignIn(reason: .nothingStored(issuer: issuer)) }
        do throws(SignInError) {
            guard let url = try revocationEndpoint(c, http: HTTPClient(configuration: configuration)) else { throw Self.noRevocationEndpoint(issuer) }
            return url
        } catch .networkUnavailable {
            return nil
        }
    }

    func revocationEndpoint(_ c: StoredCredentials, http: HTTPClient) throws(SignInError) -> String? {
        if let known = configuration.endpoints.revocation ?? c.endpoints.revocation { return known }
        return try Discovery.revocationFromAuthorizationServerMetadata(issuer: issuer, http: http)
    }

    static func noRevocationEndpoint(_ issuer: String) -> SignInError {
        .unsupported(reason: "The provider \(issuer) names no revocation endpoint (in OpenID discovery or RFC 8414 metadata), so the grant cannot be revoked; nothing was changed. Set \"revocation_endpoint\" in the configuration, or sign out without revoking.")
    }
}
