import SignInBase
import SignInProtocol
import CSignInSystem
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

// The store's reader: everything that reads an entry, in the order a cached `signin token` goes through it.
// 1. The folder (`checkDirectory`): ours, private, not a link; missing means nothing stored.
// 2. The key and the names it gives (`open`): the key where its custody keeps it (`StoreKey`); no key but entries
//    is an error, not an empty store.
// 3. The current account (`current`): the pointer `C.current` names the account's file; an older store is carried
//    over first (one access(2) tells).
// 4. The entry (`read`): as this process decrypted it before while its file is unchanged (`DecryptedEntries`); else
//    as the kernel holds it decrypted beside the unlocked key (`KernelEntries`); else the file, decrypted with the
//    key and authenticated with its name.
// 5. The parse (`checked`): the entry's one codec (`StoredCredentials.init?(json:)`), and the account it holds must
//    be the one its name says.


extension CredentialStore {
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

    func readPointer(configuration c: String) throws(SignInError) -> String? {
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
}

/// The names the store gives: the key and the names of entries, pointers and locks.
extension CredentialStore {
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
}

/// The store's folder: ours, private, created on first write.
extension CredentialStore {
    /// Checks the folder is ours and private; creates it (0700) when `create` is set.
    /// Returns false when it does not exist and was not created.
    @discardableResult
    func checkDirectory(create: Bool) throws(SignInError) -> Bool {
        var st: FileStatus
        switch Posix.status(ofLink: directory) {
        case .success(let s): st = s
        case .failure(let e):
            guard e.isMissing else { throw .storeUnreadable(path: directory, reason: e.description) }
            guard create else { return false }
            try makeDirectories()
            switch Posix.status(ofLink: directory) {
            case .success(let s): st = s
            case .failure(let e): throw .storeUnwritable(path: directory, reason: e.description)
            }
        }
        if st.kind == .symbolicLink {
            throw .storeUnreadable(path: directory, reason: "is a symbolic link; refusing to follow it (replace it with a real folder: rm \(directory) && mkdir -m 700 \(directory))")
        }
        guard st.kind == .directory else { throw .storeUnreadable(path: directory, reason: "is not a folder") }
        guard st.isOurs else {
            throw .storeUnreadable(path: directory, reason: "is owned by uid \(st.owner), not by you (uid \(Posix.geteuid())); fix: chown \(Posix.geteuid()) \(directory) && chmod 700 \(directory)")
        }
        guard st.isPrivate else {
            throw .storeUnreadable(path: directory, reason: "is open to other users (mode \(String(st.permissions & 0o777, radix: 8))); fix: chmod 700 \(directory)")
        }
        return true
    }

    func makeDirectories() throws(SignInError) {
        guard directory.hasPrefix("/") else { throw .storeUnwritable(path: directory, reason: "is not an absolute path") }
        if let failed = Directory.create(directory) { throw .storeUnwritable(path: failed.path, reason: failed.reason) }
    }

    func fileNames() throws(SignInError) -> [String] {
        switch Directory.listing(directory) {
        case .success(let names): return names
        case .failure(let e): throw .storeUnreadable(path: directory, reason: e.description)
        }
    }
}

/// Removes a file of the store; one that is not there is no error, any other failure is the store's (unwritable).
/// True when it removed one.
@discardableResult
func removeStoreFile(_ path: String) throws(SignInError) -> Bool {
    do throws(SystemError) { return try Posix.removeFile(path) } catch { throw .storeUnwritable(path: path, reason: error.description) }
}

/// Reading entries: decrypted (or as decrypted before) and checked against their names.
extension CredentialStore {
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
    func read(path: String, _ expected: Expected) throws(SignInError) -> StoredCredentials? {
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
    func checked(_ plain: [UInt8], path: String, _ expected: Expected) throws(SignInError) -> StoredCredentials {
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

    func entry(_ o: Opened, configuration c: String, account a: String) throws(SignInError) -> StoredCredentials? {
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
    func storedAccounts(_ o: Opened, configuration c: String, names: [String]? = nil) throws(SignInError) -> [StoredCredentials] {
        var found: [StoredCredentials] = []
        let listed: [String]
        if let names { listed = names } else { listed = try fileNames() }
        for name in listed {
            guard let parsed = StoreNames.parseEntry(name), parsed.configuration == c else { continue }
            if let creds = try entry(o, configuration: c, account: parsed.account) { found.append(creds) }
        }
        return found.sorted { ($0.profile.email ?? "", $0.profile.userID) < ($1.profile.email ?? "", $1.profile.userID) }
    }
}

/// Entries already decrypted by this process, with what their file looked like then: a file that has not changed
/// (same inode, size and modification time) is not decrypted again (`currentUser`, `hasPreviousSignIn`). The third of
/// the four caches in front of a token (SignInKit's `ResidentCredentials` says which answers when).
final class DecryptedEntries: Sendable {
    struct FileIdentity: Equatable {
        let inode: UInt64
        let size: Int64
        let modified: Int64
        let modifiedNanoseconds: Int64
    }

    private let entries = Locked<[String: (FileIdentity, StoredCredentials)]>([:])

    package static func identity(_ path: String) -> FileIdentity? {
        guard case .success(let st) = Posix.status(ofLink: path) else { return nil }
        return FileIdentity(inode: st.inode, size: Int64(st.size), modified: Int64(st.modified.seconds), modifiedNanoseconds: Int64(st.modified.nanoseconds))
    }

    package func lookup(_ path: String, _ id: FileIdentity) -> StoredCredentials? {
        entries.withLock { $0[path].flatMap { $0.0 == id ? $0.1 : nil } }
    }

    func remember(_ path: String, _ id: FileIdentity, _ creds: StoredCredentials) {
        entries.withLock { $0[path] = (id, creds) }
    }
}

/// Decrypted entries held in the kernel keyring beside the unlocked key, so that a cached `signin token` or
/// `whoami` reads its entry with no decryption (OpenSSL's first cipher use builds its whole method store: most of
/// a cached call's instructions). The fourth of the caches in front of a token (SignInKit's `ResidentCredentials`
/// says which answers when).
///
/// - Only while keys are cached at all (`key_cache_seconds` > 0), as "user" keys in the user keyring readable by
///   this uid alone (as the key is), never longer than the key: a key kept elsewhere is cached there already, and
///   its entries expire no later than it; a `file` key is readable from the folder by the same uid, and its
///   entries last `key_cache_seconds`.
/// - Each holds the plaintext with the identity of the file it was read from or written to (inode, size,
///   modification time): a file that changed since (a refresh by another process, a move, a sign-out) is not
///   answered from the kernel. The file's name is the account's keyed name, so only this store key finds it.
/// - `signin lock`, a key move, signing out and destroying the store remove them.
struct KernelEntries: Sendable {
    /// `signin:entries:<tag of the store folder>:`; a hash of the folder's path, so `lock` needs no key to find them.
    package let prefix: String
    /// Whether the configuration lets anything be cached in the kernel.
    let enabled: Bool

    private static let magic: [UInt8] = Array("SGE1".utf8)
    private static let headerSize = 4 + 8 * 4

    init(directory: String, cacheSeconds: Int) {
        let tag = SipHash.hash128(key: Array("signin-kernel-entries-v1".utf8.prefix(16)), Array(directory.utf8))
        prefix = "signin:entries:\(Hex.encode(tag)):"
        enabled = cacheSeconds > 0
    }

    /// The plaintext held for the file `name` while it is still `identity`.
    package func lookup(_ name: String, _ identity: DecryptedEntries.FileIdentity) -> [UInt8]? {
        guard enabled else { return nil }
        let id = signin_kernel_key_find(prefix + name, nil)
        guard id >= 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 32768)
        let n = signin_kernel_key_read(id, &buffer, UInt(buffer.count))
        defer { buffer.withUnsafeMutableBytes { Posix.zero($0) } }
        guard n > Self.headerSize, n <= buffer.count, Array(buffer[0..<4]) == Self.magic, Self.header(identity) == Array(buffer[0..<Self.headerSize]) else { return nil }
        return Array(buffer[Self.headerSize..<n])
    }

    /// Holds `plaintext` of the file `name` as `identity` for `seconds` (nothing when not positive). Quietly nothing
    /// where the kernel refuses (a full quota, a container's seccomp profile): the file is decrypted next time.
    package func store(_ name: String, _ identity: DecryptedEntries.FileIdentity, _ plaintext: [UInt8], seconds: Int) {
        guard enabled, seconds > 0 else { return }
        var payload = Self.header(identity) + plaintext
        defer { payload.withUnsafeMutableBytes { Posix.zero($0) } }
        guard payload.count <= 32767 else { return }
        _ = payload.withUnsafeBytes { signin_kernel_key_add(prefix + name, $0.baseAddress, UInt($0.count), UInt32(min(seconds, Int(UInt32.max)))) }
    }

    /// Forgets the entry of the file `name`.
    package func remove(_ name: String) {
        let id = signin_kernel_key_find(prefix + name, nil)
        if id >= 0 { _ = signin_kernel_key_remove(id) }
    }

    /// Forgets every entry of this store; how many there were.
    @discardableResult
    package func removeAll() -> Int { max(0, signin_kernel_keys_remove_prefix(prefix)) }

    private static func header(_ i: DecryptedEntries.FileIdentity) -> [UInt8] {
        var out = magic
        for v in [i.inode, UInt64(bitPattern: i.size), UInt64(bitPattern: i.modified), UInt64(bitPattern: i.modifiedNanoseconds)] {
            withUnsafeBytes(of: v.littleEndian) { out += $0 }
        }
        return out
    }
}
