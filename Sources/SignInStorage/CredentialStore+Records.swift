import SignInBase
import SignInProtocol
import FoundationEssentials

/// Records kept beside the credentials, each sealed with the store key like an entry under a keyed name made of its
/// kind and its name (`<keyed name>.<kind>`): what the API room (SignInAPIAccess) keeps about an API signed in to from
/// its address (`.api`, `.registration`, `current-api`). The store knows only how a record is sealed, and how the kinds
/// that move with a new key are named (`recordName(kind:json:)`); what is in one is the API room's. A record that does
/// not decrypt (a key moved since) is as good as none.
extension CredentialStore {
    /// A record kept beside the credentials, and what it holds: what a sign-in keeps once its grant is saved
    /// (`SignInConfiguration.recordsAfterSignIn`).
    package typealias Record = SignInConfiguration.StoreRecord

    func recordPath(_ o: Opened, kind: String, name: String) -> (path: String, configuration: String) {
        let c = o.names.configuration(issuer: name, clientID: kind)
        return (directory + "/\(c).\(kind)", c)
    }

    /// The record `name` of `kind`, or nil when none is kept or it does not decrypt.
    package func record(kind: String, name: String) throws(SignInError) -> [String: JSONValue]? {
        guard let o = try open() else { return nil }
        return record(o, kind: kind, name: name)
    }

    /// The same, with a key already opened (one key custody operation for several records).
    package func record(_ o: Opened, kind: String, name: String) -> [String: JSONValue]? {
        Self.openRecord(path: recordPath(o, kind: kind, name: name).path, kind: kind, key: o.key)
    }

    /// Keeps `json` as the record `name` of `kind` (atomically, 0600, encrypted).
    package func saveRecord(_ json: String, kind: String, name: String) throws(SignInError) {
        try prepareKey()
        guard let o = try open() else { throw .storeUnwritable(path: directory, reason: "no store key could be made") }
        let (path, c) = recordPath(o, kind: kind, name: name)
        var plain = Array(json.utf8)
        defer { plain.withUnsafeMutableBytes { Posix.zero($0) } }
        let bytes = EntryFile(version: Self.formatVersion, sealed: try Crypto.seal(plain, key: o.key, aad: EntryFile.aad(configuration: c, account: kind))).bytes
        do { try FileIO.writeAtomically(bytes, to: path) } catch { throw .storeUnwritable(path: path, reason: error.reason) }
    }

    /// Keeps `record`.
    package func save(_ record: Record) throws(SignInError) {
        try saveRecord(record.json, kind: record.kind, name: record.name)
    }

    /// Forgets the record `name` of `kind`, if one is kept (a store whose key cannot be opened says why).
    package func removeRecord(kind: String, name: String) throws(SignInError) {
        guard let o = try open() else { return }
        removeRecord(o, kind: kind, name: name)
    }

    /// The same, with a key already opened.
    package func removeRecord(_ o: Opened, kind: String, name: String) {
        _ = Posix.unlink(recordPath(o, kind: kind, name: name).path)
    }

    /// Every record of `kind` this key opens, in no order.
    package func records(kind: String) throws(SignInError) -> [[String: JSONValue]] {
        guard let o = try open() else { return [] }
        return Directory.fileNames(directory).filter { $0.hasSuffix("." + kind) }.compactMap { Self.openRecord(path: directory + "/" + $0, kind: kind, key: o.key) }
    }

    /// The name a record of a kind that moves with a new key (`api`, `registration`) is kept under, read from what it
    /// holds: an API's record by its resource; a client registered at a server by its issuer, and the API it was
    /// registered for. Nil for any other kind, or a record that names neither.
    package static func recordName(kind: String, json: [String: JSONValue]) -> String? {
        switch kind {
        case "api": return json["resource"]?.string
        case "registration": return json["issuer"]?.string.map { registrationName(issuer: $0, resource: json["resource"]?.string) }
        default: return nil
        }
    }

    /// Whether `name` is a record's file, `<keyed name>.<kind>`: a store name (`StoreNames.isName`), a dot and a kind
    /// of lowercase letters and hyphens that is not an entry's (`C.A.cred`), a pointer's (`.current`) or a lock's.
    static func isRecordFile(_ name: String) -> Bool {
        let parts = name.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, StoreNames.isName(parts[0].utf8), !parts[1].isEmpty else { return false }
        return !["cred", "current", "lock"].contains(parts[1]) && parts[1].allSatisfy { ($0.isLetter && $0.isLowercase) || $0 == "-" }
    }

    /// The name of the client registered at `issuer` (for `resource` alone, when given).
    package static func registrationName(issuer: String, resource: String?) -> String { resource.map { issuer + "\n" + $0 } ?? issuer }

    private static func openRecord(path: String, kind: String, key: [UInt8]) -> [String: JSONValue]? {
        guard var plain = openedRecord(path: path, kind: kind, key: key) else { return nil }
        defer { plain.withUnsafeMutableBytes { Posix.zero($0) } }
        return JSONValue.object(from: Data(plain))
    }

    /// The record file at `path` of `kind`, decrypted with `key` (the caller zeroes it), or nil when it cannot be read
    /// or does not decrypt: its keyed name is bound into the seal, so a file renamed is refused.
    static func openedRecord(path: String, kind: String, key: [UInt8]) -> [UInt8]? {
        let name = String(path.split(separator: "/").last ?? "")
        let c = String(name.dropLast(kind.utf8.count + 1))
        guard let data = try? FileIO.read(path: path, limit: 1 << 16, noFollow: true), let entry = try? EntryFile.parse(Array(data)) else { return nil }
        return Crypto.open(entry.sealed, key: key, aad: EntryFile.aad(configuration: c, account: kind))
    }
}
