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

    static func identity(_ path: String) -> FileIdentity? {
        var st = stat()
        guard lstat(path, &st) == 0 else { return nil }
        return FileIdentity(inode: UInt64(st.st_ino), size: Int64(st.st_size), modified: Int64(st.st_mtim.tv_sec), modifiedNanoseconds: Int64(st.st_mtim.tv_nsec))
    }

    func lookup(_ path: String, _ id: FileIdentity) -> StoredCredentials? {
        entries.withLock { $0[path].flatMap { $0.0 == id ? $0.1 : nil } }
    }

    func remember(_ path: String, _ id: FileIdentity, _ creds: StoredCredentials) {
        entries.withLock { $0[path] = (id, creds) }
    }
}

/// Encrypted, atomic, locked storage of credentials under `$XDG_DATA_HOME/signin/` (default `~/.local/share/signin/`).
///
/// Layout (format version 2), for a configuration `C` (a hash of issuer and client ID) and an account `A` (a hash of
/// its `sub`): `C.A.cred` holds the account's encrypted credentials (see `EntryFile`), `C.current` names the
/// current account (`A`, which reveals nothing), `C.A.cred.lock` and `C.lock` are lock files, and `key` is the
/// 32-byte AES-256 key. Nothing in a file name or in clear says who the accounts are. A version 1 store (`C.cred`, one account per configuration) is carried over on first use.
///
/// Every write is atomic (temporary file, fsync, rename), so a crash leaves the old state or the new one. Locks
/// are `flock(2)` on files in the folder, so `withExclusiveAccess` holds across processes.
public struct CredentialStore: CredentialStorage {
    /// The folder holding the key, the entries and their lock files.
    public let directory: String
    /// Where the key is kept and how it is unlocked.
    public let custody: KeyCustody
    let decrypted = DecryptedEntries()

    static let formatVersion: UInt8 = 2

    /// A store in `directory` (created 0700 on first write) whose key is kept as `custody` says.
    public init(directory: String, custody: KeyCustody = KeyCustody()) {
        self.directory = directory
        self.custody = custody
    }

    var key: StoreKey { StoreKey(directory: directory, custody: custody) }

    /// `$XDG_DATA_HOME/<appName>`, else `~/.local/share/<appName>` (`signin` for the command).
    public static func defaultDirectory(environment: [String: String], appName: String = "signin") -> String {
        if let x = environment["XDG_DATA_HOME"], x.hasPrefix("/") { return x + "/" + appName }
        return (environment["HOME"] ?? "/") + "/.local/share/" + appName
    }

    /// Where the store's key is, in words (`status` shows it).
    public var keyDescription: String { key.description }

    /// Moves the key to `storage` (`signin key move`); the entries stay as they are. Returns where it was and is.
    public func moveKey(to storage: KeyStorage) throws(SignInError) -> (from: String, to: String) {
        guard try checkDirectory(create: false) else { throw .noPreviousSignIn(reason: "the store \(directory) does not exist yet; sign in first") }
        return try withFileLock(directory + "/key.lock") { () throws(SignInError) -> (from: String, to: String) in try key.move(to: storage) }
    }

    /// Drops the unlocked key from the kernel keyring (`signin lock`); true when it was there.
    @discardableResult
    public func lock() -> Bool { key.lock() }

    /// The file prefix of one configuration (issuer and client ID).
    static func configurationName(issuer: String, clientID: String) -> String { hashName("\(issuer)\u{0}\(clientID)") }
    /// The file part of one account.
    static func accountName(subject: String) -> String { hashName(subject) }

    /// The entry file of one account.
    public func entryPath(issuer: String, clientID: String, subject: String) -> String {
        entryPath(issuer: issuer, clientID: clientID, accountName: Self.accountName(subject: subject))
    }

    func entryPath(issuer: String, clientID: String, accountName: String) -> String {
        directory + "/\(Self.configurationName(issuer: issuer, clientID: clientID)).\(accountName).cred"
    }

    func legacyEntryPath(issuer: String, clientID: String) -> String {
        directory + "/\(Self.configurationName(issuer: issuer, clientID: clientID)).cred"
    }

    func currentPointerPath(issuer: String, clientID: String) -> String {
        directory + "/\(Self.configurationName(issuer: issuer, clientID: clientID)).current"
    }

    /// Two 64-bit FNV-1a hashes. Not a security boundary (the associated data binds each entry to its account); it
    /// avoids initialising OpenSSL's digest machinery on the cached path, which cost more than the decryption.
    static func hashName(_ text: String) -> String {
        let input = Array(text.utf8)
        var forward: UInt64 = 0xcbf2_9ce4_8422_2325, backward: UInt64 = 0x8422_2325_cbf2_9ce4
        for b in input {
            forward = (forward ^ UInt64(b)) &* 0x0000_0100_0000_01b3
        }
        var i = input.count
        while i > 0 {
            i -= 1
            backward = (backward ^ UInt64(input[i])) &* 0x0000_0100_0000_01b3
        }
        return Hex.encode(forward) + Hex.encode(backward)
    }

    // MARK: Folder and key

    /// Checks the folder is ours and private; creates it (0700) when `create` is set.
    /// Returns false when it does not exist and was not created.
    @discardableResult
    func checkDirectory(create: Bool) throws(SignInError) -> Bool {
        var st = stat()
        if lstat(directory, &st) != 0 {
            guard errno == ENOENT else { throw .storeUnreadable(path: directory, reason: FileIO.errnoText()) }
            guard create else { return false }
            try makeDirectories()
            guard lstat(directory, &st) == 0 else { throw .storeUnwritable(path: directory, reason: FileIO.errnoText()) }
        }
        if (st.st_mode & S_IFMT) == S_IFLNK {
            throw .storeUnreadable(path: directory, reason: "is a symbolic link; refusing to follow it (replace it with a real folder: rm \(directory) && mkdir -m 700 \(directory))")
        }
        guard (st.st_mode & S_IFMT) == S_IFDIR else { throw .storeUnreadable(path: directory, reason: "is not a folder") }
        guard st.st_uid == geteuid() else {
            throw .storeUnreadable(path: directory, reason: "is owned by uid \(st.st_uid), not by you (uid \(geteuid())); fix: chown \(geteuid()) \(directory) && chmod 700 \(directory)")
        }
        guard st.st_mode & 0o077 == 0 else {
            throw .storeUnreadable(path: directory, reason: "is open to other users (mode \(String(st.st_mode & 0o777, radix: 8))); fix: chmod 700 \(directory)")
        }
        return true
    }

    private func makeDirectories() throws(SignInError) {
        var path = ""
        let parts = directory.split(separator: "/")
        for (i, part) in parts.enumerated() {
            path += "/" + part
            let last = i == parts.count - 1
            if mkdir(path, last ? 0o700 : 0o755) != 0 && errno != EEXIST {
                throw .storeUnwritable(path: path, reason: FileIO.errnoText())
            }
        }
    }

    private func readKey() throws(SignInError) -> [UInt8]? { try key.read() }

    private func readOrCreateKey() throws(SignInError) -> [UInt8] {
        if let existing = try key.read() { return existing }
        return try withFileLock(directory + "/key.lock") { () throws(SignInError) -> [UInt8] in try key.readOrCreate() }
    }

    // MARK: Entries

    /// Reads and decrypts one entry file; nil when it does not exist. Throws when it exists but cannot be trusted.
    /// A version 2 file must hold the account its name was derived from: the content is authenticated, so a file
    /// copied over another account's is refused.
    private func read(path: String, issuer: String, clientID: String, accountName: String?, version: UInt8) throws(SignInError) -> StoredCredentials? {
        let identity = DecryptedEntries.identity(path)
        if let identity, let known = decrypted.lookup(path, identity) { return known }
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
                throw .storeUnreadable(path: path, reason: "written in format version \(v), this signin reads versions 1 and 2; left as is")
            }
        }
        guard entry.version == version else {
            throw .storeUnreadable(path: path, reason: "holds format version \(entry.version) where version \(version) belongs; left as is")
        }
        guard let key = try readKey() else { throw .storeUnreadable(path: directory + "/key", reason: "the key file is missing, so \(path) cannot be decrypted; left as is") }
        guard let plain = Crypto.open(entry.sealed, key: key, aad: EntryFile.aad(version: version, issuer: issuer, clientID: clientID)) else {
            throw .storeUnreadable(path: path, reason: "does not decrypt with this key for this issuer and client (damaged, tampered with, or copied from another account); left as is")
        }
        guard let json = JSONValue.object(from: Data(plain)), let creds = StoredCredentials(json: json), creds.issuer == issuer, creds.clientID == clientID else {
            throw .storeUnreadable(path: path, reason: "decrypts but holds no credentials this signin understands; left as is")
        }
        if let accountName, Self.accountName(subject: creds.profile.userID) != accountName {
            throw .storeUnreadable(path: path, reason: "holds another account than its name says (copied from another account?); left as is")
        }
        if let identity { decrypted.remember(path, identity, creds) }
        return creds
    }

    /// The stored credentials of one account, or nil when there are none.
    func load(issuer: String, clientID: String, subject: String) throws(SignInError) -> StoredCredentials? {
        try load(issuer: issuer, clientID: clientID, accountName: Self.accountName(subject: subject))
    }

    /// The stored credentials of the account whose file name part is `accountName`.
    func load(issuer: String, clientID: String, accountName: String) throws(SignInError) -> StoredCredentials? {
        guard try checkDirectory(create: false) else { return nil }
        return try entry(issuer: issuer, clientID: clientID, accountName: accountName)
    }

    /// `load` for a caller that has checked the folder already (one `lstat` per command, not one per entry).
    private func entry(issuer: String, clientID: String, accountName: String) throws(SignInError) -> StoredCredentials? {
        let path = entryPath(issuer: issuer, clientID: clientID, accountName: accountName)
        return try read(path: path, issuer: issuer, clientID: clientID, accountName: accountName, version: Self.formatVersion)
    }

    /// Every account stored for this configuration, in a stable order (by e-mail, then `sub`).
    func accounts(issuer: String, clientID: String) throws(SignInError) -> [StoredCredentials] {
        guard try checkDirectory(create: false) else { return [] }
        let prefix = Self.configurationName(issuer: issuer, clientID: clientID) + "."
        var found: [StoredCredentials] = []
        for name in try fileNames() where name.hasPrefix(prefix) && name.hasSuffix(".cred") && name.count == prefix.count + 32 + 5 {
            let account = String(name.dropFirst(prefix.count).prefix(32))
            if let creds = try entry(issuer: issuer, clientID: clientID, accountName: account) { found.append(creds) }
        }
        return found.sorted { ($0.profile.email ?? "", $0.profile.userID) < ($1.profile.email ?? "", $1.profile.userID) }
    }

    private func fileNames() throws(SignInError) -> [String] {
        guard let dir = opendir(directory) else { throw .storeUnreadable(path: directory, reason: FileIO.errnoText()) }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            names.append(withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) })
        }
        return names
    }

    /// Encrypts and writes one account's entry atomically; the previous entry stays intact if anything fails.
    public func save(_ creds: StoredCredentials) throws(SignInError) {
        try checkDirectory(create: true)
        let key = try readOrCreateKey()
        let subject = creds.profile.userID
        let enc = JSONEncoder()
        enc.dateEncodingStrategy = .secondsSince1970
        guard let plain = try? enc.encode(creds) else { throw .system(reason: "could not encode credentials") }
        let aad = EntryFile.aad(version: Self.formatVersion, issuer: creds.issuer, clientID: creds.clientID)
        let file = EntryFile(version: Self.formatVersion, sealed: try Crypto.seal(Array(plain), key: key, aad: aad))
        let path = entryPath(issuer: creds.issuer, clientID: creds.clientID, subject: subject)
        do { try FileIO.writeAtomically(file.bytes, to: path) } catch { throw .storeUnwritable(path: path, reason: error.reason) }
        removeAbandonedTemporaryFiles()
    }

    /// Removes one account's entry; true when there was one.
    @discardableResult
    func remove(issuer: String, clientID: String, subject: String) throws(SignInError) -> Bool {
        try remove(issuer: issuer, clientID: clientID, accountName: Self.accountName(subject: subject))
    }

    /// Removes the entry whose file name part is `accountName`, without reading it (it may be damaged).
    @discardableResult
    func remove(issuer: String, clientID: String, accountName: String) throws(SignInError) -> Bool {
        guard try checkDirectory(create: false) else { return false }
        let path = entryPath(issuer: issuer, clientID: clientID, accountName: accountName)
        if unlink(path) != 0 {
            if errno == ENOENT { return false }
            throw .storeUnwritable(path: path, reason: FileIO.errnoText())
        }
        return true
    }

    // MARK: The current account

    /// The current account of this configuration, or nil when none is current. Carries a version 1 store over
    /// first (see `migrateVersion1`).
    func current(issuer: String, clientID: String) throws(SignInError) -> StoredCredentials? {
        guard try checkDirectory(create: false) else { return nil }
        // One access(2) on the cached path: a version 1 file still there means a carry-over to finish.
        if access(legacyEntryPath(issuer: issuer, clientID: clientID), F_OK) != 0 {
            guard let name = try readPointer(issuer: issuer, clientID: clientID) else { return nil }
            return try entry(issuer: issuer, clientID: clientID, accountName: name)
        }
        return try withConfigurationLock(issuer: issuer, clientID: clientID) { () throws(SignInError) -> StoredCredentials? in
            try migrateVersion1(issuer: issuer, clientID: clientID)
            guard let name = try readPointer(issuer: issuer, clientID: clientID) else { return nil }
            return try entry(issuer: issuer, clientID: clientID, accountName: name)
        }
    }

    /// The file name part of the current account, or nil.
    func currentAccountName(issuer: String, clientID: String) throws(SignInError) -> String? {
        guard try checkDirectory(create: false) else { return nil }
        return try readPointer(issuer: issuer, clientID: clientID)
    }

    private func readPointer(issuer: String, clientID: String) throws(SignInError) -> String? {
        let path = currentPointerPath(issuer: issuer, clientID: clientID)
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
        let path = currentPointerPath(issuer: issuer, clientID: clientID)
        guard let subject else {
            if unlink(path) != 0 && errno != ENOENT { throw .storeUnwritable(path: path, reason: FileIO.errnoText()) }
            return
        }
        try checkDirectory(create: true)
        do { try FileIO.writeAtomically(Array((Self.accountName(subject: subject) + "\n").utf8), to: path) } catch {
            throw .storeUnwritable(path: path, reason: error.reason)
        }
    }

    // MARK: Carrying version 1 over

    /// Carries a version 1 entry (one account per configuration) over to version 2, under the configuration lock.
    /// Each step is atomic and the old file goes last, so a crash at any point loses nothing: the next run finds
    /// the old file and finishes the move. An account already in version 2 is never overwritten by the older copy.
    func migrateVersion1(issuer: String, clientID: String) throws(SignInError) {
        let legacy = legacyEntryPath(issuer: issuer, clientID: clientID)
        guard let old = try read(path: legacy, issuer: issuer, clientID: clientID, accountName: nil, version: 1) else { return }
        let subject = old.profile.userID
        if try load(issuer: issuer, clientID: clientID, subject: subject) == nil {
            try save(old)
        }
        Failpoint.hit("migrate-after-entry")
        if try readPointer(issuer: issuer, clientID: clientID) == nil {
            try setCurrent(issuer: issuer, clientID: clientID, subject: subject)
        }
        Failpoint.hit("migrate-after-pointer")
        if unlink(legacy) != 0 && errno != ENOENT { throw .storeUnwritable(path: legacy, reason: FileIO.errnoText()) }
    }

    // MARK: Housekeeping

    /// Temporary files left by a process that died mid-write (they hold only ciphertext or an account name):
    /// removed once their writer is gone.
    private func removeAbandonedTemporaryFiles() {
        guard let names = try? fileNames() else { return }
        for name in names {
            guard let range = name.firstRange(of: ".tmp-") else { continue }
            let pidText = name[range.upperBound...].prefix { $0 != "-" }
            guard let pid = pid_t(pidText), pid != getpid(), kill(pid, 0) != 0, errno == ESRCH else { continue }
            unlink(directory + "/" + name)
        }
    }

    /// After the last account anywhere in this folder is signed out, nothing of signin's stays behind: the key,
    /// the pointers and the lock files go, and so does the folder when it is empty.
    func removeLeftoversIfEmpty() {
        guard let names = try? fileNames(), !names.contains(where: { $0.hasSuffix(".cred") }) else { return }
        key.destroy()
        for name in names where name.hasSuffix(".current") || name.hasSuffix(".lock") || name == "kernel-keyring-unavailable" {
            unlink(directory + "/" + name)
        }
        rmdir(directory)
    }

    // MARK: Locks

    /// Runs `body` holding an exclusive lock on one account, so that one process refreshes it while others wait.
    /// Different accounts never wait on each other. The lock is released when the process dies.
    func withLock<T>(issuer: String, clientID: String, subject: String, _ body: () throws(SignInError) -> T) throws(SignInError) -> T {
        try withFileLock(entryPath(issuer: issuer, clientID: clientID, subject: subject) + ".lock", body)
    }

    /// Runs `body` holding the lock of a configuration: the current-account pointer and the carry-over from
    /// version 1 change only under it.
    func withConfigurationLock<T>(issuer: String, clientID: String, _ body: () throws(SignInError) -> T) throws(SignInError) -> T {
        try withFileLock(directory + "/\(Self.configurationName(issuer: issuer, clientID: clientID)).lock", body)
    }

    private func withFileLock<T>(_ path: String, _ body: () throws(SignInError) -> T) throws(SignInError) -> T {
        try checkDirectory(create: true)
        let fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .storeUnwritable(path: path, reason: FileIO.errnoText()) }
        defer { close(fd) }
        while flock(fd, LOCK_EX) != 0 {
            guard errno == EINTR else { throw .storeUnwritable(path: path, reason: FileIO.errnoText()) }
        }
        defer { flock(fd, LOCK_UN) }
        return try body()
    }
}

// MARK: CredentialStorage

extension CredentialStore {
    /// Every account of this configuration, after carrying a version 1 entry over.
    public func allCredentials(issuer: String, clientID: String) throws(SignInError) -> [StoredCredentials] {
        if access(legacyEntryPath(issuer: issuer, clientID: clientID), F_OK) == 0 {
            try withConfigurationLock(issuer: issuer, clientID: clientID) { () throws(SignInError) in
                try migrateVersion1(issuer: issuer, clientID: clientID)
            }
        }
        return try accounts(issuer: issuer, clientID: clientID)
    }

    /// One account's entry, decrypted (or as decrypted before, while its file is unchanged).
    public func credentials(issuer: String, clientID: String, subject: String) throws(SignInError) -> StoredCredentials? {
        try load(issuer: issuer, clientID: clientID, subject: subject)
    }

    /// The account the pointer names (see `current(issuer:clientID:)`).
    public func currentCredentials(issuer: String, clientID: String) throws(SignInError) -> StoredCredentials? {
        try current(issuer: issuer, clientID: clientID)
    }

    /// Points the configuration at `subject`; the caller holds the configuration lock.
    public func makeCurrent(subject: String, issuer: String, clientID: String) throws(SignInError) {
        try setCurrent(issuer: issuer, clientID: clientID, subject: subject)
    }

    /// Removes one account's entry without reading it, and the pointer when it named that account; the caller holds
    /// the configuration lock.
    public func removeCredentials(issuer: String, clientID: String, subject: String) throws(SignInError) -> Bool {
        try migrateVersion1(issuer: issuer, clientID: clientID)
        let removed = try remove(issuer: issuer, clientID: clientID, subject: subject)
        if try currentAccountName(issuer: issuer, clientID: clientID) == Self.accountName(subject: subject) {
            try setCurrent(issuer: issuer, clientID: clientID, subject: nil)
        }
        return removed
    }

    /// Removes the current account's entry without decrypting it; the caller holds the configuration lock. A version
    /// 1 entry that cannot be read is removed as it is.
    public func removeCurrentCredentials(issuer: String, clientID: String) throws(SignInError) -> Bool {
        if (try? migrateVersion1(issuer: issuer, clientID: clientID)) == nil {
            return unlink(legacyEntryPath(issuer: issuer, clientID: clientID)) == 0
        }
        guard let name = try currentAccountName(issuer: issuer, clientID: clientID) else { return false }
        let removed = try remove(issuer: issuer, clientID: clientID, accountName: name)
        try setCurrent(issuer: issuer, clientID: clientID, subject: nil)
        return removed
    }

    /// The account's lock file (`subject`), else the configuration's.
    public func withExclusiveAccess<T>(issuer: String, clientID: String, subject: String?,
                                       _ body: () throws(SignInError) -> T) throws(SignInError) -> T {
        if let subject { return try withLock(issuer: issuer, clientID: clientID, subject: subject, body) }
        return try withConfigurationLock(issuer: issuer, clientID: clientID, body)
    }
}
