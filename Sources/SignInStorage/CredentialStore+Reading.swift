import SignInBase
import SignInProtocol
import FoundationEssentials

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
