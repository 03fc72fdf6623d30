import SignInBase
import SignInProtocol
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Entries already decrypted by this process, with what their file looked like then: a file that has not changed
/// (same inode, size and modification time) is not decrypted again (`currentUser`, `hasPreviousSignIn`).
final class DecryptedEntries: Sendable {
    struct FileIdentity: Equatable {
        let inode: UInt64
        let size: Int64
        let modified: Int64
        let modifiedNanoseconds: Int64
    }

    private let entries = Locked<[String: (FileIdentity, StoredCredentials)]>([:])

    package static func identity(_ path: String) -> FileIdentity? {
        var st = stat()
        guard Posix.lstat(path, &st) == 0 else { return nil }
        return FileIdentity(inode: UInt64(st.st_ino), size: Int64(st.st_size), modified: Int64(st.st_mtim.tv_sec), modifiedNanoseconds: Int64(st.st_mtim.tv_nsec))
    }

    package func lookup(_ path: String, _ id: FileIdentity) -> StoredCredentials? {
        entries.withLock { $0[path].flatMap { $0.0 == id ? $0.1 : nil } }
    }

    func remember(_ path: String, _ id: FileIdentity, _ creds: StoredCredentials) {
        entries.withLock { $0[path] = (id, creds) }
    }
}

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
        if let x = environment["XDG_DATA_HOME"], x.hasPrefix("/") { return x + "/" + appName }
        return ProcessEnvironment.home(environment) + "/.local/share/" + appName
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

    // MARK: Names

    /// The key and the names it gives, once per operation.
    package struct Opened {
        package let key: [UInt8]
        package let names: StoreNames
        init(_ key: [UInt8]) {
            self.key = key
            names = StoreNames(storeKey: key)
        }
    }

    /// The key (nil when the store has none yet), checked against this configuration's `key_storage`.
    package func open(recover: Bool = true) throws(SignInError) -> Opened? {
        if let k = try key.read(recover: recover, checkingConfiguration: true) { return Opened(k) }
        // No key, yet credentials: names and contents are both locked away without it.
        let entries = Directory.fileNames(directory).filter { $0.hasSuffix(".cred") }
        guard entries.isEmpty else {
            throw .storeUnreadable(path: key.filePath, reason: "the store key is missing (neither \(key.filePath) nor \(key.descriptorPath) is there), so \(entries.count) credential file(s) cannot be decrypted; left as is. Restore the key, or `signin logout --all` to start over")
        }
        return nil
    }

    /// The entry file of one account (the store must have its key).
    public func entryPath(issuer: String, clientID: String, subject: String) throws(SignInError) -> String {
        guard let o = try open() else { throw .noPreviousSignIn(reason: .noStore(path: directory)) }
        return entryPath(o, issuer: issuer, clientID: clientID, subject: subject)
    }

    func entryPath(_ o: Opened, issuer: String, clientID: String, subject: String) -> String {
        entryPath(configuration: o.names.configuration(issuer: issuer, clientID: clientID), account: o.names.account(issuer: issuer, clientID: clientID, subject: subject))
    }

    func entryPath(configuration: String, account: String) -> String { directory + "/\(configuration).\(account).cred" }

    func pointerPath(configuration: String) -> String { directory + "/\(configuration).current" }

    func legacyVersion1Path(issuer: String, clientID: String) -> String {
        directory + "/\(StoreNames.legacyConfiguration(issuer: issuer, clientID: clientID)).cred"
    }

    var accountsLockPath: String { directory + "/accounts.lock" }

    // MARK: Folder

    /// Checks the folder is ours and private; creates it (0700) when `create` is set.
    /// Returns false when it does not exist and was not created.
    @discardableResult
    func checkDirectory(create: Bool) throws(SignInError) -> Bool {
        var st = stat()
        if Posix.lstat(directory, &st) != 0 {
            guard errno == ENOENT else { throw .storeUnreadable(path: directory, reason: FileIO.errnoText()) }
            guard create else { return false }
            try makeDirectories()
            guard Posix.lstat(directory, &st) == 0 else { throw .storeUnwritable(path: directory, reason: FileIO.errnoText()) }
        }
        if (st.st_mode & S_IFMT) == S_IFLNK {
            throw .storeUnreadable(path: directory, reason: "is a symbolic link; refusing to follow it (replace it with a real folder: rm \(directory) && mkdir -m 700 \(directory))")
        }
        guard (st.st_mode & S_IFMT) == S_IFDIR else { throw .storeUnreadable(path: directory, reason: "is not a folder") }
        guard st.st_uid == Posix.geteuid() else {
            throw .storeUnreadable(path: directory, reason: "is owned by uid \(st.st_uid), not by you (uid \(Posix.geteuid())); fix: chown \(Posix.geteuid()) \(directory) && chmod 700 \(directory)")
        }
        guard st.st_mode & 0o077 == 0 else {
            throw .storeUnreadable(path: directory, reason: "is open to other users (mode \(String(st.st_mode & 0o777, radix: 8))); fix: chmod 700 \(directory)")
        }
        return true
    }

    private func makeDirectories() throws(SignInError) {
        guard directory.hasPrefix("/") else { throw .storeUnwritable(path: directory, reason: "is not an absolute path") }
        if let failed = Directory.create(directory) { throw .storeUnwritable(path: failed.path, reason: failed.reason) }
    }

    private func fileNames() throws(SignInError) -> [String] {
        guard let names = Directory.names(directory) else { throw .storeUnreadable(path: directory, reason: FileIO.errnoText()) }
        return names
    }

    // MARK: Entries

    /// What an entry file must be to be read.
    enum Expected {
        /// Format 3: named `C.A` under the store's names; the content must be that account.
        case current(Opened, configuration: String, account: String)
        /// Format 2 (unkeyed names) or 1 (one file per configuration), bound to its issuer and client.
        case legacy(version: UInt8, issuer: String, clientID: String, account: String?)
    }

    /// Reads and decrypts one entry file; nil when it does not exist. Throws when it exists but cannot be trusted:
    /// the content is authenticated with its name (format 3) or its issuer and client (formats 1 and 2), so a file
    /// copied over another account's is refused.
    private func read(path: String, _ expected: Expected) throws(SignInError) -> StoredCredentials? {
        let identity = DecryptedEntries.identity(path)
        if let identity, let known = decrypted.lookup(path, identity) { return known }
        let fileName = PathName(path: path).lastComponent
        if case .current = expected, let identity, let plain = kernelEntries.lookup(fileName, identity),
           let creds = try? checked(plain, path: path, expected) {
            decrypted.remember(path, identity, creds)
            return creds
        }
        let data: Data
        do { data = try FileIO.read(path: path, limit: 1 << 20, noFollow: true) } catch {
            if error.notFound { return nil }
            throw .storeUnreadable(path: path, reason: error.reason)
        }
        let entry: EntryFile
        do { entry = try EntryFile.parse(Array(data)) } catch {
            switch error {
            case .notAnEntry:
                throw .storeUnreadable(path: path, reason: "not a signin credential file (truncated or damaged); left as is; signing out removes it, and signing in again replaces it")
            case .unknownVersion(let v):
                throw .storeUnreadable(path: path, reason: "written in format version \(v), this signin reads versions 1 to 3; left as is")
            }
        }
        let version: UInt8, aad: [UInt8], key: [UInt8]
        switch expected {
        case .current(let o, let c, let a):
            (version, aad, key) = (Self.formatVersion, EntryFile.aad(configuration: c, account: a), o.key)
        case .legacy(let v, let issuer, let clientID, _):
            guard let k = try self.key.read() else { throw .storeUnreadable(path: directory + "/key", reason: "the key is missing, so \(path) cannot be decrypted; left as is") }
            (version, aad, key) = (v, EntryFile.aad(version: v, issuer: issuer, clientID: clientID), k)
        }
        guard entry.version == version else {
            throw .storeUnreadable(path: path, reason: "holds format version \(entry.version) where version \(version) belongs; left as is")
        }
        guard let plain = Crypto.open(entry.sealed, key: key, aad: aad) else {
            throw .storeUnreadable(path: path, reason: "does not decrypt with this store's key (damaged, tampered with, or copied from another account or store); left as is")
        }
        let creds = try checked(plain, path: path, expected)
        if let identity {
            decrypted.remember(path, identity, creds)
            if case .current = expected { kernelEntries.store(fileName, identity, plain, seconds: self.key.kernelEntrySeconds()) }
        }
        return creds
    }

    /// The credentials in a decrypted entry, checked to be what the file's name says.
    private func checked(_ plain: [UInt8], path: String, _ expected: Expected) throws(SignInError) -> StoredCredentials {
        guard let json = JSONValue.object(from: Data(plain)), let creds = StoredCredentials(json: json) else {
            throw .storeUnreadable(path: path, reason: "decrypts but holds no credentials this signin understands; left as is")
        }
        switch expected {
        case .current(let o, let c, let a):
            guard o.names.configuration(issuer: creds.issuer, clientID: creds.clientID) == c,
                  o.names.account(issuer: creds.issuer, clientID: creds.clientID, subject: creds.profile.userID) == a else {
                throw .storeUnreadable(path: path, reason: "holds another account than its name says (copied from another account?); left as is")
            }
        case .legacy(_, let issuer, let clientID, let account):
            guard creds.issuer == issuer, creds.clientID == clientID else {
                throw .storeUnreadable(path: path, reason: "decrypts but holds no credentials this signin understands; left as is")
            }
            if let account, StoreNames.legacyAccount(subject: creds.profile.userID) != account {
                throw .storeUnreadable(path: path, reason: "holds another account than its name says (copied from another account?); left as is")
            }
        }
        return creds
    }

    /// The stored credentials of one account, or nil when there are none.
    package func load(issuer: String, clientID: String, subject: String) throws(SignInError) -> StoredCredentials? {
        guard try checkDirectory(create: false), let o = try open() else { return nil }
        let c = o.names.configuration(issuer: issuer, clientID: clientID)
        return try entry(o, configuration: c, account: o.names.account(issuer: issuer, clientID: clientID, subject: subject))
    }

    private func entry(_ o: Opened, configuration c: String, account a: String) throws(SignInError) -> StoredCredentials? {
        try read(path: entryPath(configuration: c, account: a), .current(o, configuration: c, account: a))
    }

    /// A format 3 entry at `path`, read under `o` (a key move's old key).
    func entryForMove(path: String, _ o: Opened, _ c: String, _ a: String) throws(SignInError) -> StoredCredentials? {
        try read(path: path, .current(o, configuration: c, account: a))
    }

    /// Every account stored for this configuration, in a stable order (by e-mail, then `sub`).
    package func accounts(issuer: String, clientID: String) throws(SignInError) -> [StoredCredentials] {
        guard try checkDirectory(create: false), let o = try open() else { return [] }
        var names = try fileNames()
        if Self.hasLegacy(names, issuer: issuer, clientID: clientID) {
            try withConfigurationLock { () throws(SignInError) in try carryOver(o, issuer: issuer, clientID: clientID) }
            names = try fileNames()
        }
        return try storedAccounts(o, configuration: o.names.configuration(issuer: issuer, clientID: clientID), names: names)
    }

    /// The format 3 entries of configuration `c`, without carrying anything over.
    private func storedAccounts(_ o: Opened, configuration c: String, names: [String]? = nil) throws(SignInError) -> [StoredCredentials] {
        var found: [StoredCredentials] = []
        let listed: [String]
        if let names { listed = names } else { listed = try fileNames() }
        for name in listed {
            guard let parsed = StoreNames.parseEntry(name), parsed.configuration == c else { continue }
            if let creds = try entry(o, configuration: c, account: parsed.account) { found.append(creds) }
        }
        return found.sorted { ($0.profile.email ?? "", $0.profile.userID) < ($1.profile.email ?? "", $1.profile.userID) }
    }

    /// Makes sure the store has its key where the configuration says (creating it, asking for a new passphrase),
    /// so that a sign-in fails before the browser opens, not after, when the key cannot be kept there.
    /// Only where the key is, is looked at (an existing key is not unwrapped here: no prompt, no D-Bus call).
    public func prepareKey() throws(SignInError) {
        try checkDirectory(create: true)
        let location = try key.currentLocation()
        try key.checkMatchesConfiguration(location)
        guard location == .none else { return }
        // (`open` refuses to make a key where entries exist without one.)
        if try open() == nil {
            _ = try FileLock.with(key.lockPath) { () throws(SignInError) -> [UInt8] in try key.readOrCreate() }
        }
    }

    /// Encrypts and writes one account's entry atomically; the previous entry stays intact if anything fails.
    /// The key is read once: under the key lock held shared (no move can run meanwhile), or, when the store has
    /// none yet, made and used under the lock held exclusively.
    public func save(_ creds: StoredCredentials) throws(SignInError) {
        try checkDirectory(create: true)
        _ = try key.currentLocation()  // an interrupted move is finished first: it needs the lock exclusively
        let written = try FileLock.with(key.lockPath, shared: true) { () throws(SignInError) -> Bool in
            guard let o = try open(recover: false) else { return false }
            try write(creds, o)
            return true
        }
        if !written {
            try FileLock.with(key.lockPath) { () throws(SignInError) in try write(creds, Opened(try key.readOrCreate())) }
        }
        removeAbandonedTemporaryFiles()
    }

    /// What saving one account's entry needs, secured before a request whose answer must be saved (a refresh at a
    /// provider that rotates refresh tokens: once sent, the old one is spent): the key, read once now (a TPM that
    /// drops, or a passphrase cache that expires, after the request cannot lose the answer), and room on disk for two
    /// writes of the entry (the rotated token alone, then everything), allocated now.
    package final class SecuredSave {
        fileprivate let opened: Opened
        fileprivate var reservations: [FileReservation]
        fileprivate init(opened: Opened, reservations: [FileReservation]) {
            self.opened = opened
            self.reservations = reservations
        }
    }

    /// Runs `body` with the save of `creds`' account secured (`SecuredSave`), holding the key lock shared throughout
    /// (no key move can start between the request and its save). Throws before `body` runs when the store has no
    /// key or no room: then nothing was sent.
    package func withSecuredSave<T>(of creds: StoredCredentials, _ body: (SecuredSave) throws(SignInError) -> T) throws(SignInError) -> T {
        try checkDirectory(create: true)
        _ = try key.currentLocation()
        defer { removeAbandonedTemporaryFiles() }
        return try FileLock.with(key.lockPath, shared: true) { () throws(SignInError) -> T in
            guard let o = try open(recover: false) else { throw .noPreviousSignIn(reason: .noStore(path: directory)) }
            let c = o.names.configuration(issuer: creds.issuer, clientID: creds.clientID)
            let a = o.names.account(issuer: creds.issuer, clientID: creds.clientID, subject: creds.profile.userID)
            let current = FileIO.size(entryPath(configuration: c, account: a)) ?? 0
            // The new entry differs from the old by a few tokens: twice the old size, at least 16 KiB, is room enough.
            let bytes = max(16 * 1024, 2 * current)
            var reservations: [FileReservation] = []
            for _ in 0..<2 {
                do throws(FileIO.Failure) { reservations.append(try FileReservation(directory: directory, bytes: bytes)) } catch {
                    throw .storeUnwritable(path: directory, reason: "no room to save a refreshed sign-in (\(error.reason)), so the refresh was not sent")
                }
            }
            return try body(SecuredSave(opened: o, reservations: reservations))
        }
    }

    /// Saves `creds` with what `secured` holds: no key read, no new blocks on disk.
    package func save(_ creds: StoredCredentials, _ secured: SecuredSave) throws(SignInError) {
        try write(creds, secured.opened, reservation: secured.reservations.isEmpty ? nil : secured.reservations.removeFirst())
    }

    /// Writes `creds` under `o`'s key and names to `path` (default: its own entry name), into `reservation` when given.
    private func write(_ creds: StoredCredentials, _ o: Opened, to path: String? = nil, reservation: FileReservation? = nil) throws(SignInError) {
        let c = o.names.configuration(issuer: creds.issuer, clientID: creds.clientID)
        let a = o.names.account(issuer: creds.issuer, clientID: creds.clientID, subject: creds.profile.userID)
        let target = path ?? entryPath(configuration: c, account: a)
        var plain = try Self.plaintext(creds)
        defer { plain.withUnsafeMutableBytes { Posix.zero($0) } }
        let bytes = try Self.sealed(plain, o, configuration: c, account: a)
        let name = PathName(path: target).lastComponent
        kernelEntries.remove(name)
        do {
            if let reservation { try reservation.commit(bytes, to: target) } else { try FileIO.writeAtomically(bytes, to: target) }
        } catch {
            throw .storeUnwritable(path: target, reason: error.reason)
        }
        // The next cached command reads what was just written from the kernel, not by decrypting it.
        if path == nil, let identity = DecryptedEntries.identity(target) {
            kernelEntries.store(name, identity, plain, seconds: key.kernelEntrySeconds())
        }
    }

    static func plaintext(_ creds: StoredCredentials) throws(SignInError) -> [UInt8] {
        let enc = JSONEncoder()
        enc.dateEncodingStrategy = .secondsSince1970
        guard let plain = try? enc.encode(creds) else { throw .system(reason: "could not encode credentials") }
        return Array(plain)
    }

    static func sealed(_ creds: StoredCredentials, _ o: Opened, configuration c: String, account a: String) throws(SignInError) -> [UInt8] {
        try sealed(try plaintext(creds), o, configuration: c, account: a)
    }

    static func sealed(_ plain: [UInt8], _ o: Opened, configuration c: String, account a: String) throws(SignInError) -> [UInt8] {
        EntryFile(version: formatVersion, sealed: try Crypto.seal(plain, key: o.key, aad: EntryFile.aad(configuration: c, account: a))).bytes
    }

    /// Removes one account's entry; true when there was one.
    @discardableResult
    package func remove(issuer: String, clientID: String, subject: String) throws(SignInError) -> Bool {
        guard try checkDirectory(create: false), let o = try open() else { return false }
        return try remove(path: entryPath(o, issuer: issuer, clientID: clientID, subject: subject))
    }

    private func remove(path: String) throws(SignInError) -> Bool {
        kernelEntries.remove(PathName(path: path).lastComponent)
        if Posix.unlink(path) != 0 {
            if errno == ENOENT { return false }
            throw .storeUnwritable(path: path, reason: FileIO.errnoText())
        }
        Posix.unlink(path + ".lock")
        return true
    }

    // MARK: The current account

    /// The current account of this configuration, or nil when none is current. Carries an older store over
    /// first. The cached path: the key, the pointer, the entry.
    package func current(issuer: String, clientID: String) throws(SignInError) -> StoredCredentials? {
        guard try checkDirectory(create: false), let o = try open() else { return nil }
        let c = o.names.configuration(issuer: issuer, clientID: clientID)
        // One access(2) on the cached path: a version 1 file still there means a carry-over to finish; a format 2
        // pointer is looked for only when this store has none of its own.
        let legacyC = StoreNames.legacyConfiguration(issuer: issuer, clientID: clientID)
        if Posix.access(legacyVersion1Path(issuer: issuer, clientID: clientID), F_OK) != 0 {
            if let a = try readPointer(configuration: c) { return try entry(o, configuration: c, account: a) }
            guard Posix.access(pointerPath(configuration: legacyC), F_OK) == 0 else { return nil }
        }
        return try withConfigurationLock { () throws(SignInError) -> StoredCredentials? in
            try carryOver(o, issuer: issuer, clientID: clientID)
            guard let a = try readPointer(configuration: c) else { return nil }
            return try entry(o, configuration: c, account: a)
        }
    }

    /// The file name part of the current account, or nil.
    func currentAccountName(_ o: Opened, issuer: String, clientID: String) throws(SignInError) -> String? {
        try readPointer(configuration: o.names.configuration(issuer: issuer, clientID: clientID))
    }

    private func readPointer(configuration c: String) throws(SignInError) -> String? {
        try readPointerFile(pointerPath(configuration: c))
    }

    func readPointerFile(_ path: String) throws(SignInError) -> String? {
        do throws(FileIO.Failure) {
            let text = String(decoding: try FileIO.read(path: path, limit: 256, noFollow: true), as: UTF8.self).trimmingWhitespace
            guard text.count == 32, text.allSatisfy({ $0.isHexDigit }) else {
                throw FileIO.Failure(reason: "does not name an account; left as is (choosing an account replaces it)")
            }
            return text
        } catch {
            if error.notFound { return nil }
            throw .storeUnreadable(path: path, reason: error.reason)
        }
    }

    /// Makes `subject` the current account of this configuration, or none (nil). The caller holds the
    /// configuration lock.
    func setCurrent(issuer: String, clientID: String, subject: String?) throws(SignInError) {
        guard let subject else {
            guard try checkDirectory(create: false), let o = try open() else { return }
            let path = pointerPath(configuration: o.names.configuration(issuer: issuer, clientID: clientID))
            if Posix.unlink(path) != 0 && errno != ENOENT { throw .storeUnwritable(path: path, reason: FileIO.errnoText()) }
            return
        }
        try checkDirectory(create: true)
        guard let o = try open() else { throw .noPreviousSignIn(reason: .noStore(path: directory)) }
        let path = pointerPath(configuration: o.names.configuration(issuer: issuer, clientID: clientID))
        do { try FileIO.writeAtomically(Array((o.names.account(issuer: issuer, clientID: clientID, subject: subject) + "\n").utf8), to: path) } catch {
            throw .storeUnwritable(path: path, reason: error.reason)
        }
    }

    // MARK: Carrying older stores over

    static func hasLegacy(_ names: [String], issuer: String, clientID: String) -> Bool {
        let legacyC = StoreNames.legacyConfiguration(issuer: issuer, clientID: clientID)
        return names.contains { $0 == legacyC + ".cred" || $0 == legacyC + ".current" || StoreNames.parseEntry($0)?.configuration == legacyC }
    }

    /// Carries this configuration's version 1 entry and version 2 files over to version 3, under the
    /// configuration lock. Each step is atomic and an old file goes only after its new one is written, so a crash
    /// at any point loses nothing: the next run finds what is left and goes on. An account already in version 3 is
    /// never overwritten by an older copy.
    func carryOver(_ o: Opened, issuer: String, clientID: String) throws(SignInError) {
        let legacyC = StoreNames.legacyConfiguration(issuer: issuer, clientID: clientID)
        let c = o.names.configuration(issuer: issuer, clientID: clientID)
        // Version 2: one file per account, unkeyed names.
        for name in try fileNames() {
            guard let parsed = StoreNames.parseEntry(name), parsed.configuration == legacyC else { continue }
            let path = directory + "/" + name
            guard let old = try read(path: path, .legacy(version: 2, issuer: issuer, clientID: clientID, account: parsed.account)) else { continue }
            if try entry(o, configuration: c, account: o.names.account(issuer: issuer, clientID: clientID, subject: old.profile.userID)) == nil { try save(old) }
            Failpoint.hit("carry-over-after-entry")
            Posix.unlink(path)
            Posix.unlink(path + ".lock")
        }
        let legacyPointer = pointerPath(configuration: legacyC)
        if let legacyA = try readPointer(configuration: legacyC) {
            if try readPointer(configuration: c) == nil,
               let subject = try storedAccounts(o, configuration: c).first(where: { StoreNames.legacyAccount(subject: $0.profile.userID) == legacyA })?.profile.userID {
                try setCurrent(issuer: issuer, clientID: clientID, subject: subject)
            }
            Failpoint.hit("carry-over-after-pointer")
            Posix.unlink(legacyPointer)
        }
        Posix.unlink(directory + "/\(legacyC).lock")
        // Version 1: one file per configuration.
        let v1 = legacyVersion1Path(issuer: issuer, clientID: clientID)
        if let old = try read(path: v1, .legacy(version: 1, issuer: issuer, clientID: clientID, account: nil)) {
            let subject = old.profile.userID
            if try entry(o, configuration: c, account: o.names.account(issuer: issuer, clientID: clientID, subject: subject)) == nil { try save(old) }
            Failpoint.hit("migrate-after-entry")
            if try readPointer(configuration: c) == nil { try setCurrent(issuer: issuer, clientID: clientID, subject: subject) }
            Failpoint.hit("migrate-after-pointer")
            if Posix.unlink(v1) != 0 && errno != ENOENT { throw .storeUnwritable(path: v1, reason: FileIO.errnoText()) }
        }
    }

    // MARK: Housekeeping

    /// Temporary files left by a process that died mid-write (they hold only ciphertext or an account name):
    /// removed once their writer is gone.
    private func removeAbandonedTemporaryFiles() {
        guard let names = try? fileNames() else { return }
        for name in names {
            guard let range = name.firstRange(of: ".tmp-") else { continue }
            let pidText = name[range.upperBound...].prefix { $0 != "-" }
            guard let pid = pid_t(pidText), pid != Posix.getpid(), Posix.kill(pid, 0) != 0, errno == ESRCH else { continue }
            Posix.unlink(directory + "/" + name)
        }
    }

    /// After the last account anywhere in this folder is signed out, nothing of signin's stays behind: the key
    /// (wherever it was ever put), the pointers and the lock files go, and so does the folder when it is empty.
    package func removeLeftoversIfEmpty() {
        guard let names = try? fileNames(), !names.contains(where: { $0.hasSuffix(".cred") }) else { return }
        key.destroy()
        for name in Directory.fileNames(directory) where name.hasSuffix(".current") || name.hasSuffix(".lock") || name == "kernel-keyring-unavailable" {
            Posix.unlink(directory + "/" + name)
        }
        Posix.rmdir(directory)
    }

    // MARK: Locks

    /// Runs `body` holding an exclusive lock on one account, so that one process refreshes it while others wait.
    /// Different accounts never wait on each other. The lock is released when the process dies.
    package func withLock<T>(issuer: String, clientID: String, subject: String, _ body: () throws(SignInError) -> T) throws(SignInError) -> T {
        try checkDirectory(create: true)
        guard let o = try open() else { return try withConfigurationLock(body) }
        return try FileLock.with(entryPath(o, issuer: issuer, clientID: clientID, subject: subject) + ".lock", body)
    }

    /// Runs `body` holding the lock under which current-account pointers change and older stores are carried over.
    func withConfigurationLock<T>(_ body: () throws(SignInError) -> T) throws(SignInError) -> T {
        try checkDirectory(create: true)
        return try FileLock.with(accountsLockPath, body)
    }
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
