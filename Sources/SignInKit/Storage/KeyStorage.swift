import CSystem
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Where a store's key is kept (`key_storage` in the configuration). Decided once, when the key is created;
/// an existing store keeps its key where it is until `StoreKey.move(to:)`.
public enum KeyStorage: String, Sendable, CaseIterable, Codable {
    /// The Secret Service when a session bus offers it, else a file.
    case auto
    /// The freedesktop Secret Service (GNOME Keyring, KWallet, KeePassXC), as an item labelled "signin store key".
    case secretService = "secret-service"
    /// Wrapped under a key derived from a passphrase with scrypt.
    case passphrase
    /// A file beside the entries (mode 0600): what a copy of the folder carries along.
    case file
}

/// Why a passphrase is asked for.
public enum PassphrasePurpose: Sendable, Equatable {
    /// A new passphrase for a new key (ask twice).
    case create
    /// The passphrase that unlocks the key; `attempt` counts from 1.
    case unlock(attempt: Int)
}

/// Asks the person (or a script's file descriptor) for the passphrase; nil when there is no way to ask.
public typealias PassphraseProvider = @Sendable (PassphrasePurpose) -> String?

/// How a store's key is kept and found: the settings a `CredentialStore` needs for it.
public struct KeyCustody: Sendable {
    /// Where a new key goes.
    public var storage: KeyStorage
    /// How long an unwrapped key stays in the kernel keyring; zero keeps it out of the kernel.
    public var cacheDuration: Duration {
        get { .seconds(cacheSeconds) }
        set { cacheSeconds = max(0, newValue.wholeSecondsRoundedUp) }
    }
    var cacheSeconds: Int
    /// Asks for the passphrase of a `passphrase` store.
    public var passphrase: PassphraseProvider?
    /// Whether a session bus may offer the Secret Service (`$DBUS_SESSION_BUS_ADDRESS` is set).
    public var sessionBusAvailable: Bool

    /// Settings for a store: where new keys go, the cache lifetime (default eight hours), the passphrase source.
    public init(storage: KeyStorage = .auto, cacheDuration: Duration = .seconds(8 * 3600), passphrase: PassphraseProvider? = nil,
                sessionBusAvailable: Bool = getenv("DBUS_SESSION_BUS_ADDRESS").map { $0.pointee != 0 } ?? false) {
        self.storage = storage
        self.cacheSeconds = max(0, cacheDuration.wholeSecondsRoundedUp)
        self.passphrase = passphrase
        self.sessionBusAvailable = sessionBusAvailable
    }
}

/// The store's 32-byte AES key and where it lives. `key` in the store folder is a key in a file (version 1
/// stores all have one); `key.json` describes a key kept elsewhere (its Secret Service item, or the passphrase
/// wrapping with its scrypt parameters). A key unwrapped from either is held in the kernel keyring for
/// `cacheSeconds`, so cached commands and parallel callers need no D-Bus round trip and no second prompt.
struct StoreKey {
    let directory: String
    let custody: KeyCustody

    var filePath: String { directory + "/key" }
    var descriptorPath: String { directory + "/key.json" }

    /// What `key.json` holds.
    struct Descriptor: Codable, Equatable {
        /// `secretService` or `passphrase` (a file key has no descriptor).
        var storage: KeyStorage
        /// Names the key in the Secret Service and in the kernel keyring.
        var id: String
        var kdf: KDF?
        /// nonce, tag and ciphertext of the key under the passphrase's key (base64).
        var wrapped: String?

        struct KDF: Codable, Equatable {
            var name: String
            var n: UInt64
            var r: UInt64
            var p: UInt64
            var salt: String
        }

        /// Reads what `writeDescriptor` wrote, with signin's own parser (the cached path of a key kept in the
        /// Secret Service or under a passphrase reads this on every command). Nil for anything else.
        init?(json o: [String: JSONValue]) {
            guard case .string(let s)? = o["storage"], let storage = KeyStorage(rawValue: s), case .string(let id)? = o["id"] else { return nil }
            self.storage = storage
            self.id = id
            switch o["wrapped"] {
            case nil, .null?: wrapped = nil
            case .string(let w)?: wrapped = w
            default: return nil
            }
            switch o["kdf"] {
            case nil, .null?: kdf = nil
            case .object(let k)?:
                func count(_ v: JSONValue?) -> UInt64? {
                    guard case .number(let d)? = v, d >= 0, d < 1e15, d.rounded() == d else { return nil }
                    return UInt64(d)
                }
                guard case .string(let name)? = k["name"], let n = count(k["n"]), let r = count(k["r"]), let p = count(k["p"]),
                      case .string(let salt)? = k["salt"] else { return nil }
                kdf = KDF(name: name, n: n, r: r, p: p, salt: salt)
            default: return nil
            }
        }

        /// The unwrapped key's name in the kernel keyring.
        var kernelKeyName: String { "signin:\(id)" }

        init(storage: KeyStorage, id: String, kdf: KDF?, wrapped: String?) {
            self.storage = storage
            self.id = id
            self.kdf = kdf
            self.wrapped = wrapped
        }
    }

    /// scrypt's cost: N = 2^17, r = 8 takes about a quarter of a second here (bench/README).
    static let scryptN: UInt64 = 1 << 17
    static let scryptR: UInt64 = 8
    static let scryptP: UInt64 = 1

    // MARK: Where it is

    enum Location: Equatable {
        case none
        case file
        case described(Descriptor)
    }

    func location() throws(SignInError) -> Location {
        do {
            let data = try FileIO.read(path: descriptorPath, limit: 64 * 1024, noFollow: true) { privacyProblem($0, descriptorPath) }
            guard let json = JSONValue.object(from: data), let d = Descriptor(json: json), [.secretService, .passphrase].contains(d.storage) else {
                throw SignInError.storeUnreadable(path: descriptorPath, reason: "does not describe a key this signin knows; left as is")
            }
            return .described(d)
        } catch let e as FileIO.Failure {
            guard e.notFound else { throw .storeUnreadable(path: descriptorPath, reason: e.reason) }
        } catch let e as SignInError {
            throw e
        } catch {
            throw .storeUnreadable(path: descriptorPath, reason: "\(error)")
        }
        var st = stat()
        if lstat(filePath, &st) == 0 { return .file }
        guard errno == ENOENT else { throw .storeUnreadable(path: filePath, reason: FileIO.errnoText()) }
        return .none
    }

    /// Where the key is, in words, for `status`.
    var description: String {
        switch (try? location()) ?? .none {
        case .none: return "none yet (a new key goes to \(custody.storage.rawValue))"
        case .file: return "file \(filePath)"
        case .described(let d) where d.storage == .secretService: return "Secret Service item \"signin store key\" (store \(d.id))" + cacheNote
        case .described: return "under a passphrase (\(descriptorPath))" + cacheNote
        }
    }

    private var cacheNote: String { custody.cacheSeconds > 0 ? ", unlocked in the kernel keyring for up to \(custody.cacheSeconds) s" : "" }

    // MARK: Reading

    /// The key, or nil when the store has none yet.
    func read() throws(SignInError) -> [UInt8]? {
        switch try location() {
        case .none: return nil
        case .file: return try readFile()
        case .described(let d): return try unwrap(d)
        }
    }

    /// The key, created (where `custody.storage` says) when the store has none.
    func readOrCreate() throws(SignInError) -> [UInt8] {
        if let key = try read() { return key }
        let key = try Crypto.randomBytes(32)
        try write(key, to: resolvedStorage())
        guard let stored = try read() else { throw .storeUnwritable(path: directory, reason: "the new key could not be read back") }
        return stored
    }

    /// `auto`: the Secret Service when a session bus offers one that works, else a file.
    func resolvedStorage() -> KeyStorage {
        guard custody.storage == .auto else { return custody.storage }
        guard custody.sessionBusAvailable else { return .file }
        var secret: UnsafeMutablePointer<CChar>?
        var error: UnsafeMutablePointer<CChar>?
        defer { signin_secret_free(secret); signin_secret_free(error) }
        return signin_secret_lookup("probe", &secret, &error) == 0 ? .secretService : .file
    }

    private func unwrap(_ d: Descriptor) throws(SignInError) -> [UInt8] {
        if let cached = KernelKeyring.read(d.kernelKeyName) { return cached }
        let key = try unwrapUncached(d)
        if custody.cacheSeconds > 0 { KernelKeyring.add(d.kernelKeyName, key, seconds: custody.cacheSeconds, directory: directory) }
        return key
    }

    /// The key from where the descriptor says, bypassing the kernel cache.
    private func unwrapUncached(_ d: Descriptor) throws(SignInError) -> [UInt8] {
        d.storage == .secretService ? try SecretService.lookup(storeID: d.id, descriptorPath: descriptorPath) : try unwrapWithPassphrase(d)
    }

    /// Drops a described key's material outside the folder: its kernel cache entry and its Secret Service item.
    private func forget(_ d: Descriptor) {
        KernelKeyring.remove(d.kernelKeyName)
        if d.storage == .secretService { try? SecretService.clear(storeID: d.id) }
    }

    private func unwrapWithPassphrase(_ d: Descriptor) throws(SignInError) -> [UInt8] {
        guard let kdf = d.kdf, kdf.name == "scrypt", let salt = Data(base64Encoded: kdf.salt), let wrapped = d.wrapped.flatMap({ Data(base64Encoded: $0) }),
              wrapped.count == 12 + 16 + 32, kdf.n <= 1 << 22, kdf.r <= 32, kdf.p <= 16 else {
            throw .storeUnreadable(path: descriptorPath, reason: "its passphrase wrapping is damaged; left as is")
        }
        let bytes = Array(wrapped)
        let sealed = Crypto.Sealed(nonce: Array(bytes[0..<12]), ciphertext: Array(bytes[28...]), tag: Array(bytes[12..<28]))
        for attempt in 1...3 {
            guard let passphrase = custody.passphrase?(.unlock(attempt: attempt)) else {
                if attempt > 1 { break }  // a script's descriptor gives one passphrase, and it was wrong
                throw .passphraseRefused(reason: "the store's key (\(descriptorPath)) is under a passphrase and there is no way to ask for it here (no terminal, and no passphrase given)")
            }
            let kek = try Crypto.scrypt(passphrase: Array(passphrase.utf8), salt: Array(salt), n: kdf.n, r: kdf.r, p: kdf.p)
            if let key = Crypto.open(sealed, key: kek, aad: Array("signin-key-v1\u{0}\(d.id)".utf8)) { return key }
        }
        throw .passphraseRefused(reason: "wrong passphrase for \(descriptorPath); nothing was changed")
    }

    private func readFile() throws(SignInError) -> [UInt8] {
        let data: Data
        do { data = try FileIO.read(path: filePath, limit: 64, noFollow: true) { privacyProblem($0, filePath) } } catch {
            throw .storeUnreadable(path: filePath, reason: error.reason)
        }
        guard data.count == 32 else { throw .storeUnreadable(path: filePath, reason: "is not a 32-byte key (\(data.count) bytes)") }
        return Array(data)
    }

    /// Why a key file (or its descriptor), as opened, may not be trusted: another owner, or open to other users.
    private func privacyProblem(_ st: stat, _ path: String) -> String? {
        guard st.st_uid == geteuid() else { return "is owned by another user" }
        guard st.st_mode & 0o077 == 0 else {
            return "can be read by other users (mode \(String(st.st_mode & 0o777, radix: 8))); the key may be known to them. Fix: chmod 600 \(path), or sign out and in again"
        }
        return nil
    }

    // MARK: Writing and moving

    /// Puts `key` where `storage` says. For a key kept elsewhere, the descriptor is written last (atomically), so
    /// a crash before it leaves the store as it was.
    private func write(_ key: [UInt8], to storage: KeyStorage) throws(SignInError) {
        switch storage {
        case .file, .auto:
            // O_EXCL through a temporary name and link: two processes creating the key at once end up sharing one.
            let tmp = filePath + ".tmp-\(getpid())"
            do { try FileIO.writeAtomically(key, to: tmp) } catch { throw .storeUnwritable(path: filePath, reason: error.reason) }
            defer { unlink(tmp) }
            if link(tmp, filePath) != 0 && errno != EEXIST { throw .storeUnwritable(path: filePath, reason: FileIO.errnoText()) }
        case .secretService:
            let id = try newID()
            try SecretService.store(storeID: id, key: key, directory: directory)
            try writeDescriptor(Descriptor(storage: .secretService, id: id, kdf: nil, wrapped: nil))
        case .passphrase:
            guard let passphrase = custody.passphrase?(.create), !passphrase.isEmpty else {
                throw .passphraseRefused(reason: "one is needed for the new key (key_storage is passphrase), and there is no way to ask for it here (no terminal, and no passphrase given)")
            }
            let id = try newID()
            let salt = try Crypto.randomBytes(16)
            let kek = try Crypto.scrypt(passphrase: Array(passphrase.utf8), salt: salt, n: Self.scryptN, r: Self.scryptR, p: Self.scryptP)
            let sealed = try Crypto.seal(key, key: kek, aad: Array("signin-key-v1\u{0}\(id)".utf8))
            let kdf = Descriptor.KDF(name: "scrypt", n: Self.scryptN, r: Self.scryptR, p: Self.scryptP, salt: Data(salt).base64EncodedString())
            try writeDescriptor(Descriptor(storage: .passphrase, id: id, kdf: kdf, wrapped: Data(sealed.nonce + sealed.tag + sealed.ciphertext).base64EncodedString()))
        }
    }

    private func newID() throws(SignInError) -> String { Hex.encode(try Crypto.randomBytes(16)) }

    private func writeDescriptor(_ d: Descriptor) throws(SignInError) {
        let enc = JSONEncoder()
        enc.outputFormatting = [.sortedKeys]
        guard let data = try? enc.encode(d) else { throw .system(reason: "could not encode the key descriptor") }
        do { try FileIO.writeAtomically(Array(data), to: descriptorPath) } catch { throw .storeUnwritable(path: descriptorPath, reason: error.reason) }
    }

    /// Moves the key to `storage` without rewriting any entry (they stay encrypted under the same key). Each step
    /// is crash-safe: the new material is written and read back before the old is removed.
    func move(to storage: KeyStorage) throws(SignInError) -> (from: String, to: String) {
        let before = try location()
        guard let key = try read() else { throw .noPreviousSignIn(reason: "the store has no key yet; it is created at the first sign-in") }
        let target = storage == .auto ? resolvedStorage() : storage
        let from = description
        switch (before, target) {
        case (.file, .file): return (from, from)
        case (.described(let d), _) where d.storage == target: return (from, from)
        default: break
        }
        if target == .file { unlink(filePath) }  // a stale file from an interrupted move must not win over the new one
        try write(key, to: target)
        Failpoint.hit("key-move-after-write")
        // Read back from the new place, bypassing the kernel cache.
        let check: [UInt8]?
        switch try location() {
        case _ where target == .file: check = try readFile()  // the descriptor still wins until it is removed below
        case .described(let d) where d.storage == target: check = try unwrapUncached(d)
        default: check = nil
        }
        guard check == key else { throw .storeUnwritable(path: directory, reason: "the key could not be read back from its new place; the old one is kept") }
        // Now the old material goes.
        switch before {
        case .file where target != .file: unlink(filePath)
        case .described(let d):
            forget(d)
            if target == .file { unlink(descriptorPath) }
        default: break
        }
        return (from, description)
    }

    /// Drops the unwrapped key from the kernel keyring (`signin lock`); true when one was there.
    @discardableResult
    func lock() -> Bool {
        guard case .described(let d)? = try? location() else { return false }
        return KernelKeyring.remove(d.kernelKeyName)
    }

    /// Removes the key wherever it is (after the last account is signed out).
    func destroy() {
        if case .described(let d)? = try? location() {
            forget(d)
            unlink(descriptorPath)
        }
        unlink(filePath)
    }
}

/// The freedesktop Secret Service, through libsecret (loaded on first use).
enum SecretService {
    static func store(storeID: String, key: [UInt8], directory: String) throws(SignInError) {
        var error: UnsafeMutablePointer<CChar>?
        defer { signin_secret_free(error) }
        let label = "signin store key (\(directory))"
        guard signin_secret_store(storeID, label, Data(key).base64EncodedString(), &error) == 0 else {
            throw .storeUnwritable(path: "Secret Service", reason: error.map { String(cString: $0) } ?? "unknown error")
        }
    }

    static func lookup(storeID: String, descriptorPath: String) throws(SignInError) -> [UInt8] {
        var secret: UnsafeMutablePointer<CChar>?
        var error: UnsafeMutablePointer<CChar>?
        defer { signin_secret_free(secret); signin_secret_free(error) }
        let rc = signin_secret_lookup(storeID, &secret, &error)
        if rc == 1 {
            throw .storeUnreadable(path: descriptorPath, reason: "the keyring that holds the key is locked: unlock it (in your keyring app, or by signing in to the desktop) and try again; the credentials are untouched")
        }
        guard rc == 0 else {
            let reason = error.map { String(cString: $0) } ?? "unknown error"
            let locked = reason.lowercased().contains("lock") || reason.lowercased().contains("prompt")
            throw .storeUnreadable(path: descriptorPath, reason: (locked ? "the keyring is locked: unlock it (in your keyring app, or by signing in to the desktop) and try again" : "the Secret Service is not available: \(reason)") + "; the credentials are untouched")
        }
        guard let secret, let key = Data(base64Encoded: String(cString: secret)), key.count == 32 else {
            throw .storeUnreadable(path: descriptorPath, reason: "the keyring has no item \"signin store key\" for this store (store \(storeID)); it was removed or the keyring was reset. The credentials are untouched but cannot be decrypted without it; signing out removes them")
        }
        return Array(key)
    }

    static func clear(storeID: String) throws(SignInError) {
        var error: UnsafeMutablePointer<CChar>?
        defer { signin_secret_free(error) }
        guard signin_secret_clear(storeID, &error) == 0 else { throw .storeUnwritable(path: "Secret Service", reason: error.map { String(cString: $0) } ?? "") }
    }
}

/// The Linux kernel keyring: an unwrapped store key in the session keyring, possessor-only, expiring by itself.
enum KernelKeyring {
    static func read(_ description: String) -> [UInt8]? {
        let id = signin_kernel_key_find(description)
        guard id >= 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 64)
        let n = signin_kernel_key_read(id, &buffer, UInt(buffer.count))
        guard n == 32 else { return nil }
        return Array(buffer.prefix(32))
    }

    /// Holds `key` for `seconds`. Where the kernel keyring is refused (container seccomp profiles often block
    /// it), says so once per store (a marker file) and goes on without the cache.
    static func add(_ description: String, _ key: [UInt8], seconds: Int, directory: String) {
        let id = key.withUnsafeBytes { signin_kernel_key_add(description, $0.baseAddress, UInt($0.count), UInt32(min(seconds, Int(UInt32.max)))) }
        guard id < 0 else { return }
        let marker = directory + "/kernel-keyring-unavailable"
        if access(marker, F_OK) != 0 {
            FileIO.writeStandardError("signin: the kernel keyring is not available here (\(FileIO.errnoText())); the key will be unlocked on every use.\n")
            _ = try? FileIO.writeAtomically([], to: marker)
        }
    }

    @discardableResult
    static func remove(_ description: String) -> Bool {
        let id = signin_kernel_key_find(description)
        guard id >= 0 else { return false }
        return signin_kernel_key_remove(id) == 0
    }
}
