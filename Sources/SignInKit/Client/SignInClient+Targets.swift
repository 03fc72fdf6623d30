import SignInBase
import SignInProtocol
import SignInStorage
import SignInGrant
import SignInTransport
import FoundationEssentials

/// Tokens for one API answered from memory: the rule of getting them is `TokenUseCase`'s (`resourceToken`, `exchangedToken`).
extension SignInClient {
    /// The token for `resource` (or exchanged for `audience`) of `account`'s entry as kept in memory
    /// (`ResidentCredentials`), when it is there and valid for `minimumValidity` more; nil otherwise (the store decides).
    func residentTargetedToken(account: String, resource: String?, audience: String?, minimumValidity: Duration) -> SignInToken? {
        guard let (kept, _) = resident?.lookup(account), kept.grantEndedAt == nil else { return nil }
        guard let key = DerivedTokenKey.target(audience: audience, resource: resource), let t = kept.derivedToken(key), t.unrestricted != true,
              t.isFresh(at: Date(), margin: minimumValidity.timeInterval) else { return nil }
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

    /// Removes the token kept for `key` from `account`'s entry (nil: the current account), under the account's lock;
    /// false when none was kept. The grant and every other token stay.
    package func forgetDerivedToken(_ key: DerivedTokenKey, account: String?) throws(SignInError) -> Bool {
        guard let entry = try credentials(account: account) else { return false }
        return try storage.withExclusiveAccess(for: identity, subject: entry.profile.userID) { () throws(SignInError) -> Bool in
            guard var current = try storage.credentials(for: identity, subject: entry.profile.userID), current.forget(key) else { return false }
            try storage.save(current)
            return true
        }
    }
}
