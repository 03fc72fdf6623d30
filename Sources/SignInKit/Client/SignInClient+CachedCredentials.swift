import SignInBase
import SignInProtocol
import SignInStorage
import SignInTransport
import FoundationEssentials

/// Short-lived credentials bought with the person's grant (a service account's tokens, a role's AWS keys), kept
/// encrypted in the account's entry beside the person's tokens: one cache, one lock, one rule for all of them.
extension SignInClient {
    /// A credential for `key`, from the cache while it stays valid for `minimumValidity`, else bought anew.
    ///
    /// 1. No entry for the account: not signed in. An entry whose grant ended is never answered from the cache.
    /// 2. A cached credential valid for `minimumValidity` more is returned with no network.
    /// 3. Otherwise the person's token of `kind` is restored (refreshed when needed), and under the account's lock
    ///    (parallel callers and processes buy once) the cache is read again, then `mint` is asked with the token.
    ///    A refusal whose code `retryWhen` accepts (the token was refused or found expired) refreshes the person's
    ///    token once and asks again. With `bearer`, `mint` is given what it answers instead of the person's token
    ///    (asked with `true` for the second try): a credential bought with another cached credential.
    /// 4. The new credential is saved in the entry (expired ones dropped, at most 32 kept) and returned; any
    ///    refusal leaves the entry as it was.
    func cachedCredential(key: String, account: String?, minimumValidity: Duration, buyingWith kind: TokenKind,
                          retryWhen: (String) -> Bool, bearer: ((Bool) throws(SignInError) -> String)? = nil,
                          mint: (String) throws(SignInError) -> SignInToken) throws(SignInError) -> SignInToken {
        let margin = minimumValidity.timeInterval
        func cached(_ c: StoredCredentials) -> SignInToken? {
            guard let t = c.serviceAccountTokens?.first(where: { $0.key == key }), t.expiry.timeIntervalSinceNow > margin else { return nil }
            return SignInToken(value: t.value, expirationDate: t.expiry)
        }
        guard let stored = try credentials(account: account) else { throw noAccount() }
        if stored.grantEndedAt == nil, let hit = cached(stored) { return hit }
        let person = try restore(account: account, token: kind)
        let subject = person.userID
        func personToken(_ u: SignInUser) -> String { (kind == .id ? u.idToken : u.accessToken)?.value ?? "" }
        return try storage.withExclusiveAccess(for: identity, subject: subject) { () throws(SignInError) -> SignInToken in
            guard let current = try storage.credentials(for: identity, subject: subject) else { throw .noPreviousSignIn(reason: .signedOutMeanwhile) }
            if let hit = cached(current) { return hit }
            func other(_ force: Bool) throws(SignInError) -> String? {
                guard let bearer else { return nil }
                return try bearer(force)
            }
            let fresh = try other(false) ?? (kind == .id ? current.idToken : current.accessToken) ?? personToken(person)
            let minted: SignInToken
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
            guard let expiry = minted.expirationDate else { return minted }
            var next = try storage.credentials(for: identity, subject: subject) ?? current
            var tokens = (next.serviceAccountTokens ?? []).filter { $0.key != key && $0.expiry > Date() }
            tokens.append(.init(key: key, value: minted.value, expiry: expiry))
            next.serviceAccountTokens = Array(tokens.suffix(32))
            try storage.save(next)
            resident?.changed()
            return minted
        }
    }
}
