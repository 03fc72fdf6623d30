import SignInBase
import SignInProtocol
import FoundationEssentials

/// What signin learned about an API and registered for it (RFC 9728, RFC 7591), kept beside the credentials and
/// encrypted with the store key like an entry: one file per authorization server (`<keyed name>.registration`: the
/// client registered there) and one per API (`<keyed name>.api`: which server it named, and its scopes), so a
/// cached token for an API needs no network. A file that does not decrypt (a key moved since) is as good as none:
/// the API's metadata is read, and the client registers, again.
extension CredentialStore {
    func recordPath(_ o: Opened, kind: String, name: String) -> (path: String, configuration: String) {
        let c = o.names.configuration(issuer: name, clientID: kind)
        return (directory + "/\(c).\(kind)", c)
    }

    func record(kind: String, name: String) throws(SignInError) -> [String: JSONValue]? {
        guard let o = try open() else { return nil }
        let (path, c) = recordPath(o, kind: kind, name: name)
        guard let data = try? FileIO.read(path: path, limit: 1 << 16, noFollow: true), let entry = try? EntryFile.parse(Array(data)),
              var plain = Crypto.open(entry.sealed, key: o.key, aad: EntryFile.aad(configuration: c, account: kind)) else { return nil }
        defer { plain.withUnsafeMutableBytes { Posix.zero($0) } }
        return JSONValue.object(from: Data(plain))
    }

    func saveRecord(_ json: String, kind: String, name: String) throws(SignInError) {
        try prepareKey()
        guard let o = try open() else { throw .storeUnwritable(path: directory, reason: "no store key could be made") }
        let (path, c) = recordPath(o, kind: kind, name: name)
        var plain = Array(json.utf8)
        defer { plain.withUnsafeMutableBytes { Posix.zero($0) } }
        let bytes = EntryFile(version: Self.formatVersion, sealed: try Crypto.seal(plain, key: o.key, aad: EntryFile.aad(configuration: c, account: kind))).bytes
        do { try FileIO.writeAtomically(bytes, to: path) } catch { throw .storeUnwritable(path: path, reason: error.reason) }
    }

    /// The registration kept for the authorization server `issuer` (for `resource`, when given: a client per API;
    /// else, or when none was kept for the API, the one kept for the server by an earlier signin), or nil.
    package func registration(issuer: String, resource: String? = nil) throws(SignInError) -> ClientRegistration? {
        if let resource, let json = try record(kind: "registration", name: ClientRegistration.recordName(issuer: issuer, resource: resource)),
           let r = ClientRegistration(json: json), r.issuer == issuer, r.resource == resource {
            return r
        }
        guard let json = try record(kind: "registration", name: issuer), let r = ClientRegistration(json: json), r.issuer == issuer, r.resource == nil else { return nil }
        return r
    }

    /// Keeps `registration` (atomically, 0600, encrypted).
    package func save(_ registration: ClientRegistration) throws(SignInError) {
        try saveRecord(registration.json, kind: "registration", name: registration.recordName)
    }

    /// What the API at `resource` said of itself when signin first asked, and the scopes signed in for it last
    /// (`scopes`), or nil.
    package func apiMetadata(resource: String) throws(SignInError) -> ProtectedResourceMetadata? {
        guard let json = try record(kind: "api", name: resource), json["resource"]?.string == resource,
              let servers = json["authorization_servers"]?.array?.compactMap(\.string), !servers.isEmpty else { return nil }
        var m = ProtectedResourceMetadata(resource: resource, authorizationServers: servers, scopesSupported: json["scopes_supported"]?.array?.compactMap(\.string))
        m.scopesAsked = json["scopes_asked"]?.array?.compactMap(\.string)
        return m
    }

    /// Keeps what the API said of itself (and the scopes signed in for it).
    package func save(_ metadata: ProtectedResourceMetadata) throws(SignInError) {
        var o: [String: JSONValueOut] = ["resource": .string(metadata.resource), "authorization_servers": .array(metadata.authorizationServers.map { .string($0) })]
        if let s = metadata.scopesSupported { o["scopes_supported"] = .array(s.map { .string($0) }) }
        if let s = metadata.scopesAsked { o["scopes_asked"] = .array(s.map { .string($0) }) }
        try saveRecord(JSONValueOut.object(o).text, kind: "api", name: metadata.resource)
    }

    /// Every API signed in to from its address (the `.api` records this key opens): what `accounts` and `status`
    /// list beside the configurations.
    package func apiResources() throws(SignInError) -> [String] {
        guard let o = try open() else { return [] }
        var out: [String] = []
        for name in Directory.fileNames(directory) where name.hasSuffix(".api") {
            let c = String(name.dropLast(4))
            guard let data = try? FileIO.read(path: directory + "/" + name, limit: 1 << 16, noFollow: true), let entry = try? EntryFile.parse(Array(data)),
                  var plain = Crypto.open(entry.sealed, key: o.key, aad: EntryFile.aad(configuration: c, account: "api")) else { continue }
            defer { plain.withUnsafeMutableBytes { Posix.zero($0) } }
            if let r = JSONValue.object(from: Data(plain))?["resource"]?.string { out.append(r) }
        }
        return out.sorted()
    }

    /// The API chosen with `signin use URL` among several signed in to from their address, when one was.
    package func currentAPI() throws(SignInError) -> String? {
        try record(kind: "current-api", name: "current")?["resource"]?.string
    }

    /// Chooses the API plain commands answer for when no configuration names a provider (nil: none).
    package func setCurrentAPI(_ resource: String?) throws(SignInError) {
        guard let resource else {
            guard let o = try open() else { return }
            _ = try? Posix.removeFile(recordPath(o, kind: "current-api", name: "current").path)
            return
        }
        try saveRecord(JSONValueOut.object(["resource": .string(resource)]).text, kind: "current-api", name: "current")
    }

    /// Forgets what signin kept for the API at `resource` (its `.api` record and the client registered for it).
    package func removeAPIRecords(resource: String, issuer: String?) throws(SignInError) {
        guard let o = try open() else { return }
        var names = [o.names.configuration(issuer: resource, clientID: "api") + ".api"]
        if let issuer { names.append(o.names.configuration(issuer: ClientRegistration.recordName(issuer: issuer, resource: resource), clientID: "registration") + ".registration") }
        for name in names { _ = Posix.unlink(directory + "/" + name) }
        if (try? currentAPI()) == resource { try? setCurrentAPI(nil) }
    }
}
