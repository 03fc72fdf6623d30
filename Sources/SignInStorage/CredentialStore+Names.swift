import SignInBase
import SignInProtocol
import FoundationEssentials

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
