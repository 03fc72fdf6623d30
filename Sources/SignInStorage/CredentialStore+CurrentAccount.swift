import SignInBase
import SignInProtocol
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// The current account's pointer.
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
