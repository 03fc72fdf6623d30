import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Encrypted, atomic, locked storage of credentials under `$XDG_DATA_HOME/signin/` (default `~/.local/share/signin/`).
///
/// File format (version 1): `"SGNI"` magic, a version byte, a 96-bit nonce, the 128-bit GCM tag, then the
/// AES-256-GCM ciphertext of the JSON credentials. Issuer and client ID are associated data, so an entry copied
/// over another account's file does not decrypt. The key is 32 random bytes in `key` beside the entries.
public struct CredentialStore: Sendable {
    /// The folder holding the key, the entries and their lock files.
    public let directory: String

    static let magic: [UInt8] = Array("SGNI".utf8)
    static let formatVersion: UInt8 = 1

    /// A store in `directory` (created 0700 on first write).
    public init(directory: String) { self.directory = directory }

    /// `$XDG_DATA_HOME/signin`, else `~/.local/share/signin`.
    public static func defaultDirectory(environment: [String: String]) -> String {
        if let x = environment["XDG_DATA_HOME"], x.hasPrefix("/") { return x + "/signin" }
        return (environment["HOME"] ?? "/") + "/.local/share/signin"
    }

    var keyPath: String { directory + "/key" }

    /// The entry file for one issuer and client.
    public func entryPath(issuer: String, clientID: String) -> String {
        return directory + "/\(Self.entryName(issuer: issuer, clientID: clientID)).cred"
    }

    /// A stable file name for an account: two 64-bit FNV-1a hashes of issuer and client ID.
    /// Not a security boundary (the associated data binds each entry to its account); it avoids
    /// initialising OpenSSL's digest machinery on the cached path, which cost more than the decryption.
    static func entryName(issuer: String, clientID: String) -> String {
        func fnv(_ bytes: [UInt8], seed: UInt64) -> UInt64 {
            var h = seed
            for b in bytes {
                h ^= UInt64(b)
                h = h &* 0x0000_0100_0000_01b3
            }
            return h
        }
        let input = Array("\(issuer)\u{0}\(clientID)".utf8)
        return [fnv(input, seed: 0xcbf2_9ce4_8422_2325), fnv(input.reversed(), seed: 0x8422_2325_cbf2_9ce4)]
            .map { String($0, radix: 16).leftPadded(16) }.joined()
    }

    private func aad(issuer: String, clientID: String) -> [UInt8] {
        Array("signin-store-v1\u{0}\(issuer)\u{0}\(clientID)".utf8)
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

    private func readKey() throws(SignInError) -> [UInt8]? {
        var st = stat()
        if lstat(keyPath, &st) != 0 {
            guard errno == ENOENT else { throw .storeUnreadable(path: keyPath, reason: FileIO.errnoText()) }
            return nil
        }
        guard (st.st_mode & S_IFMT) == S_IFREG else { throw .storeUnreadable(path: keyPath, reason: "is not a regular file (symbolic links are refused)") }
        guard st.st_uid == geteuid() else { throw .storeUnreadable(path: keyPath, reason: "is owned by another user") }
        guard st.st_mode & 0o077 == 0 else {
            throw .storeUnreadable(path: keyPath, reason: "can be read by other users (mode \(String(st.st_mode & 0o777, radix: 8))); the key may be known to them. Fix: chmod 600 \(keyPath), or sign out and in again")
        }
        let data: Data
        do { data = try FileIO.read(path: keyPath, limit: 64, noFollow: true) } catch { throw .storeUnreadable(path: keyPath, reason: error.reason) }
        guard data.count == 32 else { throw .storeUnreadable(path: keyPath, reason: "is not a 32-byte key (\(data.count) bytes)") }
        return Array(data)
    }

    private func readOrCreateKey() throws(SignInError) -> [UInt8] {
        if let key = try readKey() { return key }
        let key = try Crypto.randomBytes(32)
        // O_EXCL through a temp name + link: two processes creating the key at once end up sharing one.
        let tmp = keyPath + ".tmp-\(getpid())"
        do { try FileIO.writeAtomically(key, to: tmp) } catch { throw .storeUnwritable(path: keyPath, reason: error.reason) }
        defer { unlink(tmp) }
        if link(tmp, keyPath) != 0 && errno != EEXIST { throw .storeUnwritable(path: keyPath, reason: FileIO.errnoText()) }
        guard let stored = try readKey() else { throw .storeUnwritable(path: keyPath, reason: "key vanished after creation") }
        return stored
    }

    // MARK: Entries

    /// The stored credentials, or nil when there are none. Throws when a file exists but cannot be trusted.
    func load(issuer: String, clientID: String) throws(SignInError) -> StoredCredentials? {
        guard try checkDirectory(create: false) else { return nil }
        let path = entryPath(issuer: issuer, clientID: clientID)
        let data: Data
        do { data = try FileIO.read(path: path, limit: 1 << 20, noFollow: true) } catch {
            if error.notFound { return nil }
            throw .storeUnreadable(path: path, reason: error.reason)
        }
        let bytes = Array(data)
        let header = Self.magic.count + 1 + 12 + 16
        guard bytes.count >= header, Array(bytes[0..<4]) == Self.magic else {
            throw .storeUnreadable(path: path, reason: "not a signin credential file (truncated or damaged); left as is. Run `signin logout` then `signin login` to replace it")
        }
        guard bytes[4] == Self.formatVersion else {
            throw .storeUnreadable(path: path, reason: "written in format version \(bytes[4]), this signin reads version \(Self.formatVersion); left as is")
        }
        guard let key = try readKey() else { throw .storeUnreadable(path: keyPath, reason: "the key file is missing, so \(path) cannot be decrypted; left as is") }
        let sealed = Crypto.Sealed(nonce: Array(bytes[5..<17]), ciphertext: Array(bytes[header...]), tag: Array(bytes[17..<33]))
        guard let plain = Crypto.open(sealed, key: key, aad: aad(issuer: issuer, clientID: clientID)) else {
            throw .storeUnreadable(path: path, reason: "does not decrypt with this key for this issuer and client (damaged, tampered with, or copied from another account); left as is")
        }
        let dec = JSONDecoder()
        dec.dateDecodingStrategy = .secondsSince1970
        guard let creds = try? dec.decode(StoredCredentials.self, from: Data(plain)), creds.issuer == issuer, creds.clientID == clientID else {
            throw .storeUnreadable(path: path, reason: "decrypts but holds no credentials this signin understands; left as is")
        }
        return creds
    }

    /// Encrypts and writes atomically; the previous entry stays intact if anything fails.
    func save(_ creds: StoredCredentials) throws(SignInError) {
        try checkDirectory(create: true)
        let key = try readOrCreateKey()
        let enc = JSONEncoder()
        enc.dateEncodingStrategy = .secondsSince1970
        guard let plain = try? enc.encode(creds) else { throw .system(reason: "could not encode credentials") }
        let sealed = try Crypto.seal(Array(plain), key: key, aad: aad(issuer: creds.issuer, clientID: creds.clientID))
        let bytes = Self.magic + [Self.formatVersion] + sealed.nonce + sealed.tag + sealed.ciphertext
        let path = entryPath(issuer: creds.issuer, clientID: creds.clientID)
        do { try FileIO.writeAtomically(bytes, to: path) } catch { throw .storeUnwritable(path: path, reason: error.reason) }
        removeAbandonedTemporaryFiles()
    }

    /// Temporary files left by a process that died mid-write (they hold only ciphertext): removed once their
    /// writer is gone.
    private func removeAbandonedTemporaryFiles() {
        guard let dir = opendir(directory) else { return }
        defer { closedir(dir) }
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard let range = name.firstRange(of: ".tmp-") else { continue }
            let pidText = name[range.upperBound...].prefix { $0 != "-" }
            guard let pid = pid_t(pidText), pid != getpid(), kill(pid, 0) != 0, errno == ESRCH else { continue }
            unlink(directory + "/" + name)
        }
    }

    /// Removes the entry; true when there was one.
    @discardableResult
    func remove(issuer: String, clientID: String) throws(SignInError) -> Bool {
        guard try checkDirectory(create: false) else { return false }
        let path = entryPath(issuer: issuer, clientID: clientID)
        if unlink(path) == 0 { return true }
        if errno == ENOENT { return false }
        throw .storeUnwritable(path: path, reason: FileIO.errnoText())
    }

    /// Runs `body` holding an exclusive lock for this entry, so that one process refreshes while others wait.
    /// The lock is released when the process dies, so a crash never leaves it held.
    func withLock<T>(issuer: String, clientID: String, _ body: () throws(SignInError) -> T) throws(SignInError) -> T {
        try checkDirectory(create: true)
        let path = entryPath(issuer: issuer, clientID: clientID) + ".lock"
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
