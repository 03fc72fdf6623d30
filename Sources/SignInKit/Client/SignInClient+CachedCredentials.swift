import SignInBase
import SignInProtocol
import SignInStorage
import SignInGrant
import SignInTransport
import FoundationEssentials

/// Short-lived credentials bought with the person's grant (a service account's tokens, a role's AWS keys), kept
/// encrypted in the account's entry beside the person's tokens: one cache, one lock, one rule for all of them. This is
/// what makes `SignInClient` the `PersonGrant` the provider families buy through.
extension SignInClient: PersonGrant {
    /// `PersonGrant.derivedCredential`: the rule is written there.
    public func derivedCredential<Credential: DerivedCredential>(
        _ key: DerivedTokenKey, account: String?, minimumValidity: Duration, buyingWith kind: TokenKind,
        retryWhen: (String) -> Bool, bearer: ((Bool) throws(SignInError) -> String)? = nil,
        mint: (String) throws(SignInError) -> Credential) throws(SignInError) -> Credential {
        let margin = minimumValidity.timeInterval
        func cached(_ c: StoredCredentials) -> Credential? {
            guard let t = c.derivedToken(key), t.expiry.timeIntervalSinceNow > margin else { return nil }
            return Credential(cachedValue: t.value, expiry: t.expiry)
        }
        guard let stored = try credentials(account: account) else { throw noAccount() }
        if stored.grantEndedAt == nil, let hit = cached(stored) { return hit }
        let person = try restore(account: account, token: kind)
        let subject = person.userID
        func personToken(_ u: SignInUser) -> String { (kind == .id ? u.idToken : u.accessToken)?.value ?? "" }
        return try storage.withExclusiveAccess(for: identity, subject: subject) { () throws(SignInError) -> Credential in
            guard let current = try storage.credentials(for: identity, subject: subject) else { throw .noPreviousSignIn(reason: .signedOutMeanwhile) }
            if let hit = cached(current) { return hit }
            func other(_ force: Bool) throws(SignInError) -> String? {
                guard let bearer else { return nil }
                return try bearer(force)
            }
            let fresh = try other(false) ?? (kind == .id ? current.idToken : current.accessToken) ?? personToken(person)
            let minted: Credential
            do throws(SignInError) {
                minted = try mint(fresh)
            } catch .providerError(let endpoint, let code, let detail) {
                guard retryWhen(code) else { throw .providerError(endpoint: endpoint, code: code, detail: detail) }
                if let renewed = try other(true) {
                    minted = try mint(renewed)
                } else {
                    minted = try mint(personToken(try restore(account: subject, forceRefresh: true, token: kind)))
                }
            }
            guard let expiry = minted.cachedExpiry else { return minted }
            var next = try storage.credentials(for: identity, subject: subject) ?? current
            next.keep(key, value: minted.cachedValue, expiry: expiry)
            try storage.save(next)
            resident?.changed()
            return minted
        }
    }
}
