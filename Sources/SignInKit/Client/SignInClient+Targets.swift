import SignInBase
import SignInProtocol
import SignInStorage
import SignInGrant
import SignInTransport
import FoundationEssentials

/// Tokens for one API: an access token restricted to a resource the sign-in asked for (RFC 8707 resource
/// indicators), or the person's access token exchanged for one meant for an audience (RFC 8693 token exchange).
/// Each is kept in the account's encrypted entry beside the person's tokens, under its own key with its own
/// expiry, so a second call for the same API is answered with no network.
extension SignInClient {
    /// An access token for `resource` alone (RFC 8707).
    ///
    /// 1. No entry for the account: not signed in; a grant the provider ended: `.noPreviousSignIn`, no request.
    /// 2. A token for `resource` kept in the entry and valid for `minimumValidity` more (and no refresh forced): it,
    ///    with no network and no lock.
    /// 3. Otherwise, under the account's lock, read again (another process may have got one meanwhile); else a
    ///    refresh with `resource=` (`refreshLocked`: the save secured first, signals held, a rotated refresh token
    ///    saved as at any refresh), whose token is kept under the resource's key; the person's own access token is
    ///    left as it was.
    /// 4. A resource the provider will not serve (`invalid_target`): `.targetRefused`, nothing stored.
    /// The answer says too whether the token is evidently not restricted to `resource`
    /// (`StoredCredentials.DerivedToken.unrestricted`).
    func resourceToken(_ resource: String, account: String?, minimumValidity: Duration, forceRefresh: Bool) throws(SignInError) -> ResourceTokenKept {
        let key = DerivedTokenKey.resource(resource)
        let margin = minimumValidity.timeInterval
        func keptEntry(_ c: StoredCredentials, fresh: Bool = true) -> StoredCredentials.DerivedToken? {
            guard let t = c.derivedToken(key), !fresh || t.expiry.timeIntervalSinceNow > margin else { return nil }
            return t
        }
        func kept(_ c: StoredCredentials, fresh: Bool = true) -> SignInToken? {
            keptEntry(c, fresh: fresh).map { SignInToken(value: $0.value, expirationDate: $0.expiry) }
        }
        func answer(_ t: SignInToken, _ c: StoredCredentials) -> ResourceTokenKept {
            ResourceTokenKept(token: t, stored: c, unrestricted: keptEntry(c, fresh: false)?.unrestricted == true)
        }
        guard let stored = try credentials(account: account) else { throw noAccount() }
        if let ended = stored.grantEndedAt { throw .noPreviousSignIn(reason: .grantEnded(on: ended)) }
        if !forceRefresh, let hit = kept(stored) { return answer(hit, stored) }
        let subject = stored.profile.userID
        let seen = kept(stored, fresh: false)?.value
        return try storage.withExclusiveAccess(for: identity, subject: subject) { () throws(SignInError) -> ResourceTokenKept in
            guard let current = try storage.credentials(for: identity, subject: subject) else { throw .noPreviousSignIn(reason: .signedOutMeanwhile) }
            if let ended = current.grantEndedAt { throw .noPreviousSignIn(reason: .grantEnded(on: ended)) }
            if let hit = kept(current), !forceRefresh || hit.value != seen { return answer(hit, current) }
            let next = try refreshLocked(current, resource: resource)
            guard let t = kept(next, fresh: false) else { throw .noPreviousSignIn(reason: .noToken(.access)) }
            return answer(t, next)
        }
    }

    /// A token for one API as `resourceToken` answers it.
    struct ResourceTokenKept {
        var token: SignInToken
        var stored: StoredCredentials
        var unrestricted: Bool
    }

    /// The person's access token exchanged at the provider's token endpoint for a token meant for `audience` (and
    /// `resource`) (RFC 8693).
    ///
    /// 1. A provider whose discovery document lists its grant types without token exchange: `.targetRefused`,
    ///    before any request.
    /// 2. A token for this audience and resource kept in the entry, valid for `minimumValidity` more: it, with no
    ///    network.
    /// 3. Otherwise the person's access token (refreshed when needed) is exchanged once under the account's lock,
    ///    with the client's authentication and, for a bound grant, a DPoP proof; a subject token the provider finds
    ///    expired or refused refreshes it once and asks again. The token is kept until its expiry, which is never
    ///    later than the subject token's.
    /// 4. A refused audience (`invalid_target`): `.targetRefused`, nothing stored.
    func exchangedToken(audience: String?, resource: String?, account: String?, minimumValidity: Duration, forceRefresh: Bool) throws(SignInError) -> (SignInToken, StoredCredentials) {
        guard let stored = try credentials(account: account) else { throw noAccount() }
        let target = audience ?? resource ?? ""
        if let offered = stored.endpoints.grantTypesSupported, !offered.contains(TokenExchange.grantType) {
            throw .targetRefused(endpoint: "the provider (\(stored.issuer))", target: target,
                                 detail: "its discovery document lists the grant types it supports, and token exchange (RFC 8693) is not one of them")
        }
        let validity = forceRefresh ? Duration.seconds(TokenRequest.maximumValidity * 2) : minimumValidity
        let token: SignInToken = try derivedCredential(.exchange(audience: audience, resource: resource), account: account, minimumValidity: validity,
                                                       buyingWith: .access, retryWhen: { $0 == "invalid_token" || $0 == "invalid_grant" }) { subject throws(SignInError) in
            // The subject token was restored (refreshed when needed) just before this call, so the entry holds its
            // expiry: read here, a token kept from before costs no restore.
            let subjectExpiry = try credentials(account: account)?.accessTokenExpiry
            var tokens = TokenClient(config: configuration, endpoints: stored.endpoints)
            tokens.proofKey = try stored.proofKey()
            let r = try tokens.exchange(subjectToken: subject, subjectTokenType: TokenExchange.accessTokenType, audience: audience, resource: resource,
                                        requestedTokenType: TokenExchange.accessTokenType)
            var expiry = r.expiresIn.map { Date(timeIntervalSinceNow: TimeInterval($0)) } ?? subjectExpiry
            if let bound = subjectExpiry, let e = expiry, bound < e { expiry = bound }
            return SignInToken(value: r.accessToken, expirationDate: expiry)
        }
        return (token, stored)
    }
}

extension SignInClient {
    /// The token for `resource` (or exchanged for `audience`) of `account`'s entry as kept in memory
    /// (`ResidentCredentials`), when it is there and valid for `minimumValidity` more; nil otherwise (the store decides).
    func residentTargetedToken(account: String, resource: String?, audience: String?, minimumValidity: Duration) -> SignInToken? {
        guard let (kept, _) = resident?.lookup(account), kept.grantEndedAt == nil else { return nil }
        let key: DerivedTokenKey = audience != nil ? .exchange(audience: audience, resource: resource) : .resource(resource ?? "")
        guard let t = kept.derivedToken(key), t.unrestricted != true,
              t.expiry.timeIntervalSinceNow > minimumValidity.timeInterval else { return nil }
        return SignInToken(value: t.value, expirationDate: t.expiry)
    }

    /// Reads `account`'s entry once and keeps it in memory for the next cached call (no refresh, no network).
    func keepResident(account: String) async {
        guard let resident, let generation = resident.beginRead() else { return }
        let found: (StoredCredentials, Bool)? = try? await offPool("reading the store") { (_) throws(SignInError) -> (StoredCredentials, Bool)? in
            guard let c = try self.credentials(account: account) else { return nil }
            let current = try self.storage.currentCredentials(for: self.identity)
            return (c, current?.profile.userID == c.profile.userID)
        }
        if let (c, isCurrent) = found { resident.keep(account, c, isCurrent: isCurrent, generation: generation) }
    }
}
