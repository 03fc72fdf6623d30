import SignInBase
import SignInProtocol
import CSignInSystem
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// The store's 32-byte AES key and where it lives. `key` in the store folder is a key in a file; `key.json`
/// describes a key kept elsewhere (its Secret Service item, or the passphrase wrapping with its scrypt
/// parameters). A key unwrapped from either is held in the kernel keyring for `cacheSeconds`, so cached commands
/// and parallel callers need no D-Bus round trip and no second prompt. `key-move.json` is the journal of a key
/// move (`KeyMoveJournal`): a command that finds one finishes or rolls back that move before it reads the key.
package struct StoreKey {
    package let directory: String
    package let custody: KeyCustody

    var filePath: String { directory + "/key" }
    var descriptorPath: String { directory + "/key.json" }
    var lockPath: String { directory + "/key.lock" }
    var journalPath: String { directory + "/key-move.json" }
    /// A key written by a move that has not committed yet ends in this.
    static let pendingSuffix = ".pending"

    /// What `key.json` holds.
    package struct Descriptor: Codable, Equatable {
        /// `secretService` or `passphrase` (a file key has no descriptor).
        package var storage: KeyStorage
        /// Names the key in the Secret Service and in the kernel keyring.
        package var id: String
        var kdf: KDF?
        /// nonce, tag and ciphertext of the key under the passphrase's key (base64).
        var wrapped: String?
        /// The key sealed by the TPM (its public and private parts, base64): loads only on the TPM that made it.
        var sealed: String?

        package struct KDF: Codable, Equatable {
            package var name: String
            package var n: UInt64
            package var r: UInt64
            package var p: UInt64
            var salt: String
        }

        /// Reads what `writeDescriptor` wrote, with signin's own parser (the cached path of a key kept in the
        /// Secret Service or under a passphrase reads this on every command). Nil for anything else.
        package init?(json o: [String: JSONValue]) {
            guard case .string(let s)? = o["storage"], let storage = KeyStorage(rawValue: s), case .string(let id)? = o["id"] else { return nil }
            self.storage = storage
            self.id = id
            switch o["wrapped"] {
            case nil, .null?: wrapped = nil
            case .string(let w)?: wrapped = w
            default: return nil
            }
            switch o["sealed"] {
            case nil, .null?: sealed = nil
            case .string(let w)?: sealed = w
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

        /// What `writeDescriptor` writes and `init?(json:)` reads: `Codable`'s members and names (keys sorted, no member
        /// for nil), so a descriptor an earlier signin wrote with `JSONEncoder` reads the same. One codec, written here.
        package var json: JSONValueOut {
            var o: [String: JSONValueOut] = ["storage": .string(storage.rawValue), "id": .string(id)]
            o["wrapped"] = wrapped.map { .string($0) }
            o["sealed"] = sealed.map { .string($0) }
            o["kdf"] = kdf.map { .object(["name": .string($0.name), "n": .int(Int($0.n)), "r": .int(Int($0.r)), "p": .int(Int($0.p)), "salt": .string($0.salt)]) }
            return .object(o)
        }

        /// The unwrapped key's name in the kernel keyring.
        var kernelKeyName: String { "signin:\(id)" }

        package init(storage: KeyStorage, id: String, kdf: KDF?, wrapped: String?, sealed: String? = nil) {
            self.storage = storage
            self.id = id
            self.kdf = kdf
            self.wrapped = wrapped
            self.sealed = sealed
        }
    }

    /// scrypt's cost: N = 2^17, r = 8 takes about a quarter of a second here (bench/README).
    static let scryptN: UInt64 = 1 << 17
    static let scryptR: UInt64 = 8
    static let scryptP: UInt64 = 1

    // MARK: Where it is

    package enum Location: Equatable {
        case none
        case file
        case described(Descriptor)

        package var storage: KeyStorage? {
            switch self {
            case .none: return nil
            case .file: return .file
            case .described(let d): return d.storage
            }
        }
    }

    func location() throws(SignInError) -> Location {
        if let d = try readDescriptor(at: descriptorPath) { return .described(d) }
        switch Posix.status(ofLink: filePath) {
        case .success: return .file
        case .failure(let e) where e.isMissing: return .none
        case .failure(let e): throw .storeUnreadable(path: filePath, reason: e.description)
        }
    }

    func readDescriptor(at path: String) throws(SignInError) -> Descriptor? {
        do {
            let data = try FileIO.read(path: path, limit: 64 * 1024, noFollow: true) { privacyProblem($0, path) }
            guard let json = JSONValue.object(from: data), let d = Descriptor(json: json), d.storage.isDescribed else {
                throw SignInError.storeUnreadable(path: path, reason: "does not describe a key this signin knows; left as is")
            }
            return d
        } catch let e as FileIO.Failure {
            guard e.notFound else { throw .storeUnreadable(path: path, reason: e.reason) }
            return nil
        } catch let e as SignInError {
            throw e
        } catch {
            throw .storeUnreadable(path: path, reason: "\(error)")
        }
    }

    /// Where the key is, as values (`status --json`).
    package var summary: (storage: String, path: String?, cacheSeconds: Int) {
        switch (try? location()) ?? .none {
        case .none: return ("none", nil, 0)
        case .file: return (KeyStorage.file.rawValue, filePath, 0)
        case .described(let d): return (d.storage.rawValue, d.storage == .secretService ? nil : descriptorPath, custody.cacheSeconds)
        }
    }

    /// Where the key is, in words, for `status`.
    package var description: String {
        switch (try? location()) ?? .none {
        case .none: return "none yet (a new key goes to \(custody.storage.rawValue))"
        case .file:
            return "file \(filePath)" + (custody.storage == .auto ? "; `signin key move --to passphrase` (or `--to secret-service`) protects it" : "")
        case .described(let d): return d.storage.place.describe(d, self) + cacheNote
        }
    }

    private var cacheNote: String { custody.cacheSeconds > 0 ? ", unlocked in the kernel keyring (your uid only) for up to \(custody.cacheSeconds) s" : ", never cached (key_cache_seconds 0)" }

    /// Refuses a key kept elsewhere than this configuration's `key_storage` says (every configuration shares the
    /// store and its key): the person asked for a passphrase, say, and must not silently get a file.
    func checkMatchesConfiguration(_ location: Location) throws(SignInError) {
        guard custody.storage != .auto, let actual = location.storage, actual != custody.storage else { return }
        let words = actual == .auto ? "where auto chose" : actual.place.words(self)
        throw .configInvalid(file: custody.configurationPath ?? directory, field: "key_storage",
                             reason: "asks for \(custody.storage.rawValue), but the store key, which every configuration shares, is kept \(words). Run `signin key move --to \(custody.storage.rawValue)` to move it there for every configuration, or set key_storage to \"\(actual.rawValue)\" (or \"auto\")")
    }

    // MARK: Reading

    /// Where the key is, after an interrupted move is finished (or rolled back): one access(2) when there is none.
    /// `recover: false` is for a caller that holds the key lock already.
    package func currentLocation(recover: Bool = true) throws(SignInError) -> Location {
        if Posix.access(journalPath, F_OK) == 0 {
            if recover {
                try FileLock.with(lockPath) { () throws(SignInError) in try finishInterruptedMove() }
            } else {
                try finishInterruptedMove()
            }
        }
        return try location()
    }

    /// The key, or nil when the store has none yet. An interrupted move is finished (or rolled back) first;
    /// `recover: false` is for a caller that holds the key lock already. With `checkingConfiguration`, a key kept
    /// elsewhere than `key_storage` says is refused.
    package func read(recover: Bool = true, checkingConfiguration: Bool = false) throws(SignInError) -> [UInt8]? {
        let loc = try currentLocation(recover: recover)
        if checkingConfiguration { try checkMatchesConfiguration(loc) }
        switch loc {
        case .none: return nil
        case .file: return try readFile(filePath)
        case .described(let d): return try unwrap(d)
        }
    }

    /// The key, created (where `custody.storage` says) when the store has none. The caller holds the key lock.
    func readOrCreate() throws(SignInError) -> [UInt8] {
        if let key = try read(recover: false, checkingConfiguration: true) { return key }
        let key = try Crypto.randomBytes(32)
        let (storage, reason) = resolvedStorage()
        if let reason {
            // `signin key move` acts on the signin command's store only; a program's own store (its `appName`) is
            // protected by its configuration's key_storage instead.
            let fix = PathName(path: directory).lastComponent == "signin" ? "`signin key move --to passphrase` protects it"
                : "a configuration's key_storage (passphrase, secret-service or tpm) keeps it elsewhere"
            custody.notice("the store key is a file beside the credentials (\(filePath)): \(reason). \(fix).")
        } else if custody.storage == .auto, storage == .tpm {
            custody.notice("the store key is sealed to this machine's TPM (\(custody.tpmDevice ?? "")); a copy of the folder opens nowhere else.")
        }
        let passphrase = storage.asksPassphrase ? try newPassphrase() : nil
        _ = try write(key, to: storage, file: filePath, descriptor: descriptorPath, id: try newID(), passphrase: passphrase)
        guard let stored = try read(recover: false) else { throw .storeUnwritable(path: directory, reason: "the new key could not be read back") }
        return stored
    }

    /// `auto`: the TPM when one answers, else the Secret Service when a session bus offers one that works, else a
    /// file (with the reason). A TPM that is named but does not answer is said too.
    func resolvedStorage() -> (KeyStorage, fallback: String?) {
        guard custody.storage == .auto else { return (custody.storage, nil) }
        var tpmNote = ""
        if let device = custody.tpmDevice {
            guard let problem = TPM.problem(device: device) else { return (.tpm, nil) }
            tpmNote = "the TPM (\(device)) did not answer: \(problem); "
        }
        guard custody.sessionBusAvailable else { return (.file, tpmNote + "no Secret Service here (no session bus)") }
        var secret: UnsafeMutablePointer<CChar>?
        var error: UnsafeMutablePointer<CChar>?
        defer { signin_secret_free(secret); signin_secret_free(error) }
        if signin_secret_lookup("probe", &secret, &error) == 0 { return (.secretService, nil) }
        return (.file, tpmNote + "the Secret Service did not answer (\(SecretService.explained(error.map { String(cString: $0) } ?? "unknown error")))")
    }

    private func unwrap(_ d: Descriptor) throws(SignInError) -> [UInt8] {
        // key_cache_seconds 0 means the kernel is never asked, even when another configuration filled the cache.
        if custody.cacheSeconds > 0, let cached = KernelKeyring.read(d.kernelKeyName, notice: custody.notice) { return cached }
        let key = try unwrapUncached(d)
        cache(key, d)
        return key
    }

    package func cache(_ key: [UInt8], _ d: Descriptor) {
        if custody.cacheSeconds > 0 { KernelKeyring.add(d.kernelKeyName, key, seconds: custody.cacheSeconds, directory: directory, notice: custody.notice) }
    }

    /// The key from where the descriptor says, bypassing the kernel cache; `passphrase` when it is known already.
    func unwrapUncached(_ d: Descriptor, descriptorPath path: String? = nil, passphrase: String? = nil) throws(SignInError) -> [UInt8] {
        try d.storage.place.unwrap(d, path: path ?? descriptorPath, passphrase: passphrase, self)
    }

    /// Drops a described key's material outside the folder: its kernel cache entry and its Secret Service item.
    func forget(_ d: Descriptor) {
        KernelKeyring.remove(d.kernelKeyName)
        d.storage.place.forget(d)
    }

    func readFile(_ path: String) throws(SignInError) -> [UInt8] {
        let data: Data
        do { data = try FileIO.read(path: path, limit: 64, noFollow: true) { privacyProblem($0, path) } } catch {
            throw .storeUnreadable(path: path, reason: error.reason)
        }
        guard data.count == 32 else { throw .storeUnreadable(path: path, reason: "is not a 32-byte key (\(data.count) bytes)") }
        return Array(data)
    }

    /// Why a key file (or its descriptor), as opened, may not be trusted: another owner, or open to other users.
    private func privacyProblem(_ st: FileStatus, _ path: String) -> String? {
        guard st.isOurs else { return "is owned by another user" }
        guard st.isPrivate else {
            return "can be read by other users (mode \(String(st.permissions & 0o777, radix: 8))); the key may be known to them. Fix: chmod 600 \(path), or sign out and in again"
        }
        return nil
    }

    // MARK: Writing

    /// A new passphrase from the person (asked twice) or the script's descriptor, refused under the floor.
    func newPassphrase() throws(SignInError) -> String {
        guard let passphrase = custody.passphrase?(.create), !passphrase.isEmpty else {
            throw .passphraseUnavailable(path: descriptorPath)
        }
        if let problem = StorePassphrase.problem(passphrase) { throw .passphraseRefused(reason: problem) }
        return passphrase
    }

    /// Puts `key` where `storage` says: a file at `file`, or the material elsewhere and its descriptor at
    /// `descriptor`, written last (atomically), so a crash before it leaves the store as it was. Returns the
    /// descriptor of a key kept elsewhere.
    package func write(_ key: [UInt8], to storage: KeyStorage, file: String, descriptor: String, id: String, passphrase: String?) throws(SignInError) -> Descriptor? {
        try storage.place.write(key, file: file, descriptor: descriptor, id: id, passphrase: passphrase, self)
    }

    func newID() throws(SignInError) -> String { Hex.encode(try Crypto.randomBytes(16)) }

    func writeDescriptor(_ d: Descriptor, to path: String) throws(SignInError) {
        do { try FileIO.writeAtomically(Array(d.json.text.utf8), to: path) } catch { throw .storeUnwritable(path: path, reason: error.reason) }
    }

    // MARK: Locking and removing

    /// Drops the unwrapped key and the decrypted entries from the kernel keyring (`signin lock`); true when either
    /// was there.
    @discardableResult
    package func lock() -> Bool {
        let entries = kernelEntries.removeAll() > 0
        guard case .described(let d)? = try? location() else { return entries }
        return KernelKeyring.remove(d.kernelKeyName) || entries
    }

    /// Where decrypted entries of this store are held in the kernel (`KernelEntries`).
    var kernelEntries: KernelEntries { KernelEntries(directory: directory, cacheSeconds: custody.cacheSeconds) }

    /// How long an entry decrypted now may stay in the kernel: no longer than the unlocked key stays there (a key kept
    /// elsewhere), or `key_cache_seconds` (a file key, which the same uid reads from the folder anyway); 0: not at all.
    func kernelEntrySeconds() -> Int {
        guard custody.cacheSeconds > 0 else { return 0 }
        switch try? location() {
        case .file?: return custody.cacheSeconds
        case .described(let d)?:
            let id = signin_kernel_key_find(d.kernelKeyName, nil)
            guard id >= 0 else { return 0 }
            let left = signin_kernel_key_seconds_left(id)
            return left == -2 ? custody.cacheSeconds : min(custody.cacheSeconds, max(0, left))
        default: return 0
        }
    }

    /// Removes the key from every place signin ever put one for this folder (after the last account is signed
    /// out): the file, the descriptor and what it names, an interrupted move's staged key, and any Secret Service
    /// item of this folder.
    func destroy() {
        kernelEntries.removeAll()
        try? FileLock.with(lockPath) { () throws(SignInError) in try finishInterruptedMove() }
        for path in [descriptorPath, descriptorPath + Self.pendingSuffix] {
            if let d = try? readDescriptor(at: path) { forget(d) }
            Posix.unlink(path)
        }
        Posix.unlink(filePath)
        Posix.unlink(filePath + Self.pendingSuffix)
        if custody.sessionBusAvailable { SecretService.clearAll(directory: directory) }
    }
}
