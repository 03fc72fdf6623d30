import SignInBase
import SignInProtocol
import SignInStorage
import FoundationEssentials

/// What signin learned about an API and registered for it (RFC 9728, RFC 7591), kept beside the credentials as the
/// store's records (`CredentialStore+Records`): one per authorization server (`.registration`: the client registered
/// there, per API when registered for one) and one per API (`.api`: which server it named, and its scopes), so a
/// cached token for an API needs no network; and which API plain commands answer for (`current-api`). A record that
/// does not decrypt (a key moved since) is as good as none: the API's metadata is read, and the client registers,
/// again.
extension CredentialStore {
    /// The registration kept for the authorization server `issuer` (for `resource`, when given: a client per API;
    /// else, or when none was kept for the API, the one kept for the server by an earlier signin), or nil.
    package func registration(issuer: String, resource: String? = nil) throws(SignInError) -> ClientRegistration? {
        if let resource, let json = try record(kind: "registration", name: CredentialStore.registrationName(issuer: issuer, resource: resource)),
           let r = ClientRegistration(json: json), r.issuer == issuer, r.resource == resource {
            return r
        }
        guard let json = try record(kind: "registration", name: issuer), let r = ClientRegistration(json: json), r.issuer == issuer, r.resource == nil else { return nil }
        return r
    }

    /// Keeps `registration` (atomically, 0600, encrypted).
    package func save(_ registration: ClientRegistration) throws(SignInError) {
        try save(registration.record)
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
        try save(metadata.record)
    }

    /// Every API signed in to from its address (the `.api` records this key opens): what `accounts` and `status`
    /// list beside the configurations.
    package func apiResources() throws(SignInError) -> [String] {
        try records(kind: "api").compactMap { $0["resource"]?.string }.sorted()
    }

    /// The API chosen with `signin use URL` among several signed in to from their address, when one was.
    package func currentAPI() throws(SignInError) -> String? {
        try record(kind: "current-api", name: "current")?["resource"]?.string
    }

    /// Chooses the API plain commands answer for when no configuration names a provider (nil: none).
    package func setCurrentAPI(_ resource: String?) throws(SignInError) {
        guard let resource else { return try removeRecord(kind: "current-api", name: "current") }
        try saveRecord(JSONValueOut.object(["resource": .string(resource)]).text, kind: "current-api", name: "current")
    }

    /// Forgets what signin kept for the API at `resource` (its `.api` record and the client registered for it), and
    /// that it is the current API if it is. The key is opened once (with a Secret Service or a TPM, each opening is a
    /// round trip).
    package func removeAPIRecords(resource: String, issuer: String?) throws(SignInError) {
        guard let o = try open() else { return }
        removeRecord(o, kind: "api", name: resource)
        if let issuer { removeRecord(o, kind: "registration", name: CredentialStore.registrationName(issuer: issuer, resource: resource)) }
        if record(o, kind: "current-api", name: "current")?["resource"]?.string == resource { removeRecord(o, kind: "current-api", name: "current") }
    }
}

extension ClientRegistration {
    /// This registration as the store keeps it.
    package var record: CredentialStore.Record { CredentialStore.Record(kind: "registration", name: recordName, json: json) }
}

extension ProtectedResourceMetadata {
    /// What the API said of itself (and the scopes signed in for it) as the store keeps it.
    package var record: CredentialStore.Record {
        var o: [String: JSONValueOut] = ["resource": .string(resource), "authorization_servers": .array(authorizationServers.map { .string($0) })]
        if let s = scopesSupported { o["scopes_supported"] = .array(s.map { .string($0) }) }
        if let s = scopesAsked { o["scopes_asked"] = .array(s.map { .string($0) }) }
        return CredentialStore.Record(kind: "api", name: resource, json: JSONValueOut.object(o).text)
    }
}
