import SignInBase
import SignInProtocol
import FoundationEssentials

/// Encrypted, atomic, locked storage of credentials under `$XDG_DATA_HOME/signin/` (default `~/.local/share/signin/`).
///
/// Layout (format version 3), for a configuration `C` and an account `A`, both named by `StoreNames` under a key
/// derived from the store key: `C.A.cred` holds the account's encrypted credentials (see `EntryFile`), `C.current`
/// names the current account (`A`), `C.A.cred.lock` is the account's refresh lock, `accounts.lock` the lock under
/// which current pointers change, and the key is `key` or described by `key.json` (`StoreKey`). Without the key,
/// nothing in a file name or in clear says who the accounts are, nor which provider. Version 1 (`C.cred`, one
/// account per configuration) and version 2 (unkeyed names) stores are carried over on first use.
///
/// Every write is atomic (temporary file, fsync, rename), so a crash leaves the old state or the new one; a key
/// move is journaled (`KeyMoveJournal`). Locks are `flock(2)` on files in the folder, so `withExclusiveAccess`
/// holds across processes; entries are written holding `key.lock` shared, so a key move (which holds it
/// exclusively) never races a save.
public struct CredentialStore: CredentialStorage {
    /// The folder holding the key, the entries and their lock files.
    public let directory: String
    /// Where the key is kept and how it is unlocked.
    public let custody: KeyCustody
    let decrypted = DecryptedEntries()

    static let formatVersion: UInt8 = 3

    /// A store in `directory` (created 0700 on first write) whose key is kept as `custody` says.
    public init(directory: String, custody: KeyCustody = KeyCustody()) {
        self.directory = directory
        self.custody = custody
    }

    package var key: StoreKey { StoreKey(directory: directory, custody: custody) }
    var kernelEntries: KernelEntries { key.kernelEntries }

    /// `$XDG_DATA_HOME/<appName>`, else `~/.local/share/<appName>` (`signin` for the command). A relative
    /// `$XDG_DATA_HOME` is ignored, as the XDG specification says.
    public static func defaultDirectory(environment: [String: String], appName: String = "signin") -> String {
        ProcessEnvironment.xdgFolder(.data, appName: appName, environment: environment)
    }

    /// Where the store's key is, in words (`status` shows it).
    public var keyDescription: String { key.description }

    /// Where the store's key is, as values: `storage` `file`, `secret-service`, `passphrase`, or `none` (no key
    /// yet); `path` the key file or its descriptor (nil for none); `cacheSeconds` how long an unlocked key stays in
    /// the kernel keyring (0 for a file, which is never cached there).
    public var keyLocation: (storage: String, path: String?, cacheSeconds: Int) { key.summary }

    /// Drops the unlocked key and the entries held decrypted beside it from the kernel keyring (`signin lock`);
    /// true when either was there.
    @discardableResult
    public func lock() -> Bool { key.lock() }
}


// MARK: CredentialStorage

extension CredentialStore {
    /// Every account of this configuration, after carrying an older store over.
    public func allCredentials(for client: ClientIdentity) throws(SignInError) -> [StoredCredentials] {
        try accounts(issuer: client.issuer, clientID: client.clientID)
    }

    /// One account's entry, decrypted (or as decrypted before, while its file is unchanged).
    public func credentials(for client: ClientIdentity, subject: String) throws(SignInError) -> StoredCredentials? {
        try load(issuer: client.issuer, clientID: client.clientID, subject: subject)
    }

    /// The account the pointer names (see `current(issuer:clientID:)`).
    public func currentCredentials(for client: ClientIdentity) throws(SignInError) -> StoredCredentials? {
        try current(issuer: client.issuer, clientID: client.clientID)
    }

    /// Points the configuration at `subject`; the caller holds the configuration lock.
    public func makeCurrent(subject: String, for client: ClientIdentity) throws(SignInError) {
        try setCurrent(issuer: client.issuer, clientID: client.clientID, subject: subject)
    }

    /// Removes one account's entry without reading it, and the pointer when it named that account; the caller holds
    /// the configuration lock.
    public func removeCredentials(for client: ClientIdentity, subject: String) throws(SignInError) -> Bool {
        let (issuer, clientID) = (client.issuer, client.clientID)
        guard try checkDirectory(create: false), let o = try open() else { return false }
        try carryOver(o, issuer: issuer, clientID: clientID)
        let removed = try remove(issuer: issuer, clientID: clientID, subject: subject)
        if try currentAccountName(o, issuer: issuer, clientID: clientID) == o.names.account(issuer: issuer, clientID: clientID, subject: subject) {
            try setCurrent(issuer: issuer, clientID: clientID, subject: nil)
        }
        return removed
    }

    /// Removes the current account's entry without decrypting it; the caller holds the configuration lock. An
    /// older entry that cannot be read is removed as it is.
    public func removeCurrentCredentials(for client: ClientIdentity) throws(SignInError) -> Bool {
        let (issuer, clientID) = (client.issuer, client.clientID)
        guard try checkDirectory(create: false), let o = try open() else { return false }
        if (try? carryOver(o, issuer: issuer, clientID: clientID)) == nil {
            let legacyC = StoreNames.legacyConfiguration(issuer: issuer, clientID: clientID)
            var removed = Posix.unlink(legacyVersion1Path(issuer: issuer, clientID: clientID)) == 0
            if let a = try? readPointerFile(pointerPath(configuration: legacyC)) {
                removed = Posix.unlink(entryPath(configuration: legacyC, account: a)) == 0 || removed
                Posix.unlink(pointerPath(configuration: legacyC))
            }
            if removed { return true }
        }
        guard let name = try currentAccountName(o, issuer: issuer, clientID: clientID) else { return false }
        let removed = try remove(path: entryPath(configuration: o.names.configuration(issuer: issuer, clientID: clientID), account: name))
        try setCurrent(issuer: issuer, clientID: clientID, subject: nil)
        return removed
    }

    /// The account's lock file (`subject`), else the configuration's.
    public func withExclusiveAccess<T>(for client: ClientIdentity, subject: String?,
                                       _ body: () throws(SignInError) -> T) throws(SignInError) -> T {
        if let subject { return try withLock(issuer: client.issuer, clientID: client.clientID, subject: subject, body) }
        return try withConfigurationLock(body)
    }
}
