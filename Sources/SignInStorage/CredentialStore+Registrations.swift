import SignInBase
import SignInProtocol
import SignInTransport
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// What signin learned about an API and registered for it (RFC 9728, RFC 7591), kept beside the credentials and
/// encrypted with the store key like an entry: one file per authorization server (`<keyed name>.registration`: the
/// client registered there) and one per API (`<keyed name>.api`: which server it named, and its scopes), so a
/// cached token for an API needs no network. A file that does not decrypt (a key moved since) is as good as none:
/// the API's metadata is read, and the client registers, again.
extension CredentialStore {
    private func recordPath(_ o: Opened, kind: String, name: String) -> (path: String, configuration: String) {
        let c = o.names.configuration(issuer: name, clientID: kind)
        return (directory + "/\(c).\(kind)", c)
    }

    private func record(kind: String, name: String) throws(SignInError) -> [String: JSONValue]? {
        guard let o = try open() else { return nil }
        let (path, c) = recordPath(o, kind: kind, name: name)
        guard let data = try? FileIO.read(path: path, limit: 1 << 16, noFollow: true), let entry = try? EntryFile.parse(Array(data)),
              var plain = Crypto.open(entry.sealed, key: o.key, aad: EntryFile.aad(configuration: c, account: kind)) else { return nil }
        defer { plain.withUnsafeMutableBytes { Posix.zero($0) } }
        return JSONValue.object(from: Data(plain))
    }

    private func saveRecord(_ json: String, kind: String, name: String) throws(SignInError) {
        try prepareKey()
        guard let o = try open() else { throw .storeUnwritable(path: directory, reason: "no store key could be made") }
        let (path, c) = recordPath(o, kind: kind, name: name)
        var plain = Array(json.utf8)
        defer { plain.withUnsafeMutableBytes { Posix.zero($0) } }
        let bytes = EntryFile(version: Self.formatVersion, sealed: try Crypto.seal(plain, key: o.key, aad: EntryFile.aad(configuration: c, account: kind))).bytes
        do { try FileIO.writeAtomically(bytes, to: path) } catch { throw .storeUnwritable(path: path, reason: error.reason) }
    }

    /// The registration kept for the authorization server `issuer`, or nil.
    package func registration(issuer: String) throws(SignInError) -> ClientRegistration? {
        guard let json = try record(kind: "registration", name: issuer), let r = ClientRegistration(json: json), r.issuer == issuer else { return nil }
        return r
    }

    /// Keeps `registration` (atomically, 0600, encrypted).
    package func save(_ registration: ClientRegistration) throws(SignInError) {
        try saveRecord(registration.json, kind: "registration", name: registration.issuer)
    }

    /// What the API at `resource` said of itself when signin first asked, or nil.
    package func apiMetadata(resource: String) throws(SignInError) -> ProtectedResourceMetadata? {
        guard let json = try record(kind: "api", name: resource), json["resource"]?.string == resource,
              let servers = json["authorization_servers"]?.array?.compactMap(\.string), !servers.isEmpty else { return nil }
        return ProtectedResourceMetadata(resource: resource, authorizationServers: servers, scopesSupported: json["scopes_supported"]?.array?.compactMap(\.string))
    }

    /// Keeps what the API said of itself.
    package func save(_ metadata: ProtectedResourceMetadata) throws(SignInError) {
        var o: [String: JSONValueOut] = ["resource": .string(metadata.resource), "authorization_servers": .array(metadata.authorizationServers.map { .string($0) })]
        if let s = metadata.scopesSupported { o["scopes_supported"] = .array(s.map { .string($0) }) }
        try saveRecord(JSONValueOut.object(o).text, kind: "api", name: metadata.resource)
    }
}
