import SignInBase
import SignInProtocol
import SignInStorage
import FoundationEssentials

/// The signed-in person's grant as a provider family sees it: the configuration, the stored entry, the one token
/// path, and the entry's cache of what the grant buys. `SignInClient` is the one in SignInKit; a family reaches the
/// client through this and nothing else, so families sit below the client and never call each other.
public protocol PersonGrant: Sendable {
    /// The configuration, with every family's section.
    var configuration: SignInConfiguration { get }

    /// The stored entry of `account` (nil: the current one), or nil when nobody is signed in there. No network.
    func credentials(account: String?) throws(SignInError) -> StoredCredentials?

    /// The error for "nobody is signed in" as the client words it.
    func noAccount() -> SignInError

    /// The one token path (`SignInClient.token(_:)`).
    func token(_ request: TokenRequest) throws(SignInError) -> IssuedToken

    /// The service-account chain `principal` comes to (empty: the person): the token path's principal rule, which a
    /// consumer that shows whom it serves (the metadata server's account) asks too.
    func serviceAccountChain(for principal: TokenRequest.Principal) -> [String]

    /// A credential the grant buys, kept in the entry's cache under `key` while it stays valid for `minimumValidity`.
    ///
    /// 1. No entry for the account: not signed in. An entry whose grant ended is never answered from the cache.
    /// 2. A cached credential valid for `minimumValidity` more is returned with no network.
    /// 3. Otherwise the person's token of `kind` is restored (refreshed when needed), and under the account's lock
    ///    (parallel callers and processes buy once) the cache is read again, then `mint` is asked with the token.
    ///    A refusal whose code `retryWhen` accepts refreshes the person's token once and asks again. With
    ///    `bearer`, `mint` is given what it answers instead of the person's token (asked with `true` for the second
    ///    try): a credential bought with another cached credential.
    /// 4. The new credential is saved in the entry (expired ones dropped, at most 32 kept) and returned; any
    ///    refusal leaves the entry as it was.
    func derivedCredential<Credential: DerivedCredential>(
        _ key: DerivedTokenKey, account: String?, minimumValidity: Duration, buyingWith kind: TokenKind,
        retryWhen: (String) -> Bool, bearer: ((Bool) throws(SignInError) -> String)?,
        mint: (String) throws(SignInError) -> Credential) throws(SignInError) -> Credential

    /// A record a family keeps beside the entries, sealed as they are (a client registration it made at a server):
    /// its JSON object, or nil when none is kept or this grant keeps no records.
    func familyRecord(kind: String, name: String) -> [String: JSONValue]?

    /// Keeps `json` as the record `name` of `kind` (atomically; a grant that keeps no records keeps nothing).
    func keepFamilyRecord(_ json: String, kind: String, name: String) throws(SignInError)
}

extension PersonGrant {
    /// A grant without a store of records (a stand-in, an in-memory store): none kept.
    public func familyRecord(kind: String, name: String) -> [String: JSONValue]? { nil }
    public func keepFamilyRecord(_ json: String, kind: String, name: String) throws(SignInError) {}
}

/// What a derived-token cache keeps: one secret text and when it expires. A token is its value; a family's
/// credential of several parts (an AWS role's keys) says how it is kept and read back.
public protocol DerivedCredential: Sendable {
    /// The text kept (encrypted) in the entry.
    var cachedValue: String { get }
    /// When it expires; nil: it is not cached.
    var cachedExpiry: Date? { get }
    /// The credential `value` was kept as, or nil when it cannot be read back.
    init?(cachedValue value: String, expiry: Date)
}

extension SignInToken: DerivedCredential {
    public var cachedValue: String { value }
    public var cachedExpiry: Date? { expirationDate }
    public init?(cachedValue value: String, expiry: Date) { self.init(value: value, expirationDate: expiry) }
}
