import SignInBase
import SignInProtocol
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Carrying older stores (formats 1 and 2) over to format 3.
extension CredentialStore {
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
            try removeStoreFile(v1)
        }
    }
}
