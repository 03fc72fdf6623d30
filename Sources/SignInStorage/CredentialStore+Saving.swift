import SignInBase
import SignInProtocol
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Writing entries: the key made where the configuration says, each entry saved atomically (and the save secured before a
/// request whose answer must be saved), removed.
extension CredentialStore {
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
    func write(_ creds: StoredCredentials, _ o: Opened, to path: String? = nil, reservation: FileReservation? = nil) throws(SignInError) {
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
        try creds.entryPlaintext()
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

    func remove(path: String) throws(SignInError) -> Bool {
        kernelEntries.remove(PathName(path: path).lastComponent)
        guard try removeStoreFile(path) else { return false }
        Posix.unlink(path + ".lock")
        return true
    }
}

extension CredentialStore {
    /// Makes `subject` the current account of this configuration, or none (nil). The caller holds the
    /// configuration lock.
    func setCurrent(issuer: String, clientID: String, subject: String?) throws(SignInError) {
        guard let subject else {
            guard try checkDirectory(create: false), let o = try open() else { return }
            let path = pointerPath(configuration: o.names.configuration(issuer: issuer, clientID: clientID))
            try removeStoreFile(path)
            return
        }
        try checkDirectory(create: true)
        guard let o = try open() else { throw .noPreviousSignIn(reason: .noStore(path: directory)) }
        let path = pointerPath(configuration: o.names.configuration(issuer: issuer, clientID: clientID))
        do { try FileIO.writeAtomically(Array((o.names.account(issuer: issuer, clientID: clientID, subject: subject) + "\n").utf8), to: path) } catch {
            throw .storeUnwritable(path: path, reason: error.reason)
        }
    }
}
