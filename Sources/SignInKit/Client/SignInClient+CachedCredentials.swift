import SignInBase
import SignInProtocol
import SignInStorage
import SignInGrant
import FoundationEssentials

/// Short-lived credentials bought with the person's grant (a service account's tokens, a role's AWS keys), kept
/// encrypted in the account's entry beside the person's tokens: one cache, one lock, one rule for all of them. This is
/// what makes `SignInClient` the `PersonGrant` the provider families buy through; the rule is `TokenUseCase`'s.
extension SignInClient: PersonGrant {
    /// `PersonGrant.derivedCredential`: the rule is written there.
    public func derivedCredential<Credential: DerivedCredential>(
        _ key: DerivedTokenKey, account: String?, minimumValidity: Duration, buyingWith kind: TokenKind,
        retryWhen: (String) -> Bool, bearer: ((Bool) throws(SignInError) -> String)? = nil,
        mint: (String) throws(SignInError) -> Credential) throws(SignInError) -> Credential {
        try tokenUseCase.derivedCredential(key, account: account, minimumValidity: minimumValidity, buyingWith: kind,
                                           retryWhen: retryWhen, bearer: bearer, mint: mint)
    }

    /// `PersonGrant.familyRecord`: a record of the encrypted store's (none for another storage).
    public func familyRecord(kind: String, name: String) -> [String: JSONValue]? {
        guard let store = credentialStore else { return nil }
        return (try? store.record(kind: kind, name: name)) ?? nil
    }

    /// `PersonGrant.keepFamilyRecord`: kept in the encrypted store (nothing for another storage).
    public func keepFamilyRecord(_ json: String, kind: String, name: String) throws(SignInError) {
        try credentialStore?.saveRecord(json, kind: kind, name: name)
    }
}
