import SignInBase
import SignInProtocol
import SignInStorage
import SignInTransport
import FoundationEssentials

/// Signing in to an API from its address alone, as the Model Context Protocol's authorization asks of every client:
/// the API says where to sign in (RFC 9728), signin is known there (a client ID metadata document, or registered by
/// RFC 7591) and signs in asking for that API (RFC 8707), at any OAuth 2.0 server (an OpenID provider or not).
/// `signin login --resource URL` and `signin token --resource URL` with no configuration for the API take this path.
public enum APIAccess {
    /// The configuration that signs in for the API at `resource`, with no configuration written by anyone.
    ///
    /// 1. Known from an earlier run (what the API said, and the client known at its server, in the store at
    ///    `storeDirectory`, encrypted) and nothing new asked (`challenge`, `scopes`): used as it is, no network.
    /// 2. Otherwise the API's protected resource metadata: the `resource_metadata` of `challenge` (a 401 or 403 the
    ///    program got), else the API asked itself without a token (its 401 names it), else the well-known URLs. A
    ///    document for another resource, or naming an authorization server that is not https (but on loopback), is
    ///    refused.
    /// 3. The first authorization server it names, and its metadata (RFC 8414, or OpenID's), which must offer PKCE
    ///    with S256 and have an issuer without query or fragment.
    /// 4. The scopes: the challenge's `scope`, else those kept from the last sign-in for the API, else the
    ///    metadata's `scopes_supported`; with the scopes `scopes` adds (a step-up); `openid`, `email` and `profile`
    ///    only for a server that is an OpenID provider.
    /// 5. How signin is known there, in the specification's order: the client registered for this API before (when
    ///    its registered scopes cover these), else a client ID metadata document (`clientMetadataDocument`, where the
    ///    server says `client_id_metadata_document_supported`), else dynamic registration (a public native client:
    ///    one loopback redirect URI, PKCE, no secret) for this API alone, else `.unsupported` saying what to
    ///    configure. What the API said and the client are kept before they are used.
    /// 6. The configuration: that client at that server, its redirect port, the API as its one resource (named on
    ///    every token request), and the scopes.
    ///
    /// `network`: a company network's CA file and proxy (a configuration's `ca_file` and `proxy`), for every request of
    /// the discovery and of the sign-in it configures.
    public static func configuration(for resource: String, storeDirectory: String, httpTimeout: Duration = .seconds(30), network: NetworkSettings = NetworkSettings()) throws(SignInError) -> SignInConfiguration {
        try configuration(for: resource, storeDirectory: storeDirectory, httpTimeout: httpTimeout, network: network, challenge: nil, addingScopes: [])
    }

    /// `configuration(for:storeDirectory:)` from what an API answered: `challenge` (a 401's or a 403's
    /// `WWW-Authenticate` challenge: its `resource_metadata` says where the API's metadata is, its `scope` what the
    /// API wants), and `addingScopes` (a step-up: the scopes a 403 `insufficient_scope` named, added to those held).
    /// `clientMetadataDocument`: the https URL of a client ID metadata document the person's organisation hosts
    /// (`signin client-metadata` prints one), used as `client_id` where the server supports it.
    /// `registeringAgain`: the client kept for the API is not offered again (the server forgot it: a refresh or an
    /// exchange answered `invalid_client`); a new one is registered.
    ///
    /// An API whose metadata now names another authorization server than the one it named when signin first asked
    /// (the first step of a mix-up, or a move) is refused (`authorization_server_changed`, naming both) unless
    /// `allowingServerChange`: the caller asked the person, or said so. `readingMetadataAgain`: the API's metadata is
    /// read even when the store knows it (a new sign-in asks the API again: that is where a move shows).
    public static func configuration(for resource: String, storeDirectory: String, httpTimeout: Duration = .seconds(30), network: NetworkSettings = NetworkSettings(),
                                     challenge: WWWAuthenticate.Challenge?, addingScopes: [String], clientMetadataDocument: String? = nil,
                                     registeringAgain: Bool = false, allowingServerChange: Bool = false,
                                     readingMetadataAgain: Bool = false) throws(SignInError) -> SignInConfiguration {
        var probe = SignInConfiguration(clientID: "signin")
        probe.httpTimeout = httpTimeout
        probe.network = network
        let http = HTTPClient(configuration: probe)
        let store = CredentialStore(directory: storeDirectory)
        // Step 1: known from an earlier run: no network.
        let record = try store.apiMetadata(resource: resource)
        if challenge == nil && addingScopes.isEmpty && !registeringAgain && !readingMetadataAgain, let known = try known(resource, record, store, httpTimeout, network) { return known }
        try HTTPClient.loadLibrary()
        // Step 2.
        let (found, challengeScopes) = try ProtectedResourceMetadata.discover(for: resource, challenge: challenge, http: http)
        var metadata = found
        let issuer = metadata.authorizationServers[0]
        if let pinned = record?.authorizationServers.first, !Issuer.same(pinned, issuer), !allowingServerChange {
            throw .providerError(endpoint: "the API's metadata (\(ProtectedResourceMetadata.url(for: resource) ?? resource))", code: "authorization_server_changed",
                                 detail: "\(resource.withoutControlCharacters) now names \(issuer.withoutControlCharacters) as its authorization server, but named \(pinned.withoutControlCharacters) when signin first signed in to it; nothing was sent to the new server. If the move is expected, sign in again and confirm it, or `signin logout --resource \(resource.withoutControlCharacters)` first")
        }
        // Step 3.
        let server = try Discovery.discoveredServer(issuer: issuer, http: http)
        let serverScopes = server.scopesSupported
        let openID = server.isOpenIDProvider
        // Step 4.
        var scopes = challengeScopes ?? record?.scopesAsked ?? defaultScopes(metadata, openID: false)
        for s in addingScopes where !scopes.contains(s) { scopes.append(s) }
        if openID {
            for s in ["profile", "email", "openid"] where !scopes.contains(s) && (serverScopes?.contains(s) ?? true) { scopes.insert(s, at: 0) }
        }
        // Step 5.
        var client: ClientRegistration
        let documentTaken = server.clientIDMetadataDocumentSupported == true
        if let document = clientMetadataDocument, documentTaken {
            // The specification's order: a client ID metadata document before a registration (kept or new).
            client = ClientRegistration(issuer: issuer, clientID: document, clientSecret: nil, redirectPort: 0, redirectPath: ClientRegistration.redirectPath)
            client.kind = .metadataDocument
            client.resource = resource
        } else if !registeringAgain, let kept = try store.registration(issuer: issuer, resource: resource), kept.covers(scopes), kept.kind == .registered {
            client = kept
        } else {
            guard let endpoint = server.registrationEndpoint else {
                throw .unsupported(reason: "\(issuer) (the authorization server of \(resource.withoutControlCharacters)) does not let clients register themselves (no registration_endpoint)\(documentTaken ? " and takes client ID metadata documents: set client_id_metadata_document to the https URL where `signin client-metadata` prints one is hosted" : ""), or register signin there by hand and write its configuration with `signin init`")
            }
            if let problem = EndpointURL.problem(endpoint) {
                throw .providerError(endpoint: "the metadata of \(issuer)", code: "invalid_registration_endpoint", detail: problem)
            }
            // Every scope the server lists that this sign-in could ask (a later step-up included), else these.
            let register = (serverScopes?.filter { !["openid", "email", "profile"].contains($0) || openID }).flatMap { $0.isEmpty ? nil : $0 } ?? scopes
            client = try ClientRegistration.register(at: endpoint, issuer: issuer, port: try LoopbackServer.freeLoopbackPort(),
                                                     scopes: Array(Set(register + scopes)).sorted(), http: http)
            client.resource = resource
        }
        client.openID = openID
        metadata.scopesAsked = scopes
        var c = configuration(resource, scopes: scopes, client, httpTimeout, network)
        // The server's metadata was read once (step 3): the sign-in takes its endpoints from it instead of reading it
        // again. (Where they cannot be made from it, the sign-in's own discovery says why.)
        if let endpoints = try? Discovery.endpoints(for: c, fetched: server, http: HTTPClient(configuration: c)) {
            DiscoveryCache.shared.store(endpoints, for: c)
        }
        if let earlier = record, let held = try heldConfiguration(resource, earlier, store, network),
           held.clientID != client.clientID || held.issuer != issuer {
            // A grant is held through the records there now: they stay until the new sign-in has succeeded (a
            // cancelled step-up keeps the old client and grant working).
            c.recordsAfterSignIn = .init(records: [client.record, metadata.record], replacing: held.identity)
        } else {
            try store.save(client)
            try store.save(metadata)
        }
        return c
    }

    /// The configuration of the sign-in kept for the API through its current records, when some account holds a
    /// grant there; else nil.
    private static func heldConfiguration(_ resource: String, _ record: ProtectedResourceMetadata, _ store: CredentialStore, _ network: NetworkSettings) throws(SignInError) -> SignInConfiguration? {
        guard let c = try known(resource, record, store, .seconds(30), network), !((try? store.allCredentials(for: c.identity)) ?? []).isEmpty else { return nil }
        return c
    }

    /// The configuration for a new sign-in to the API at `resource` (`signin login --resource URL`): the API is asked
    /// again, not only the store. `token` (the access token held for it, if any) is presented: a 403
    /// `insufficient_scope` naming scopes (RFC 6750 3.1) is a step-up, signed in for the scopes held and the ones
    /// named; a 401 names where the metadata is. Without a challenge, as `configuration(for:storeDirectory:)`.
    ///
    /// `addingScopes`: scopes asked for besides the held ones and any the API names (`signin login --resource URL
    /// --scope S`: the step-up for one tool of an MCP server whose 403 a plain request never sees). `presentingHeaders`:
    /// the held token's headers as its grant presents them (`SignInUser.authorizationHeaders`: `Authorization: DPoP`
    /// and a proof for a bound grant), instead of `token` as a bearer token.
    public static func configurationForSignIn(for resource: String, storeDirectory: String, presenting token: String?,
                                              httpTimeout: Duration = .seconds(30), network: NetworkSettings = NetworkSettings(), clientMetadataDocument: String? = nil,
                                              addingScopes extra: [String] = [], registeringAgain: Bool = false,
                                              presentingHeaders: [String: String]? = nil, allowingServerChange: Bool = false) throws(SignInError) -> SignInConfiguration {
        var probe = SignInConfiguration(clientID: "signin")
        probe.httpTimeout = httpTimeout
        probe.network = network
        try HTTPClient.loadLibrary()
        let http = HTTPClient(configuration: probe)
        var challenge: WWWAuthenticate.Challenge?
        // The held token as the grant presents it (`presentingHeaders`: `DPoP` and its proof for a bound grant).
        let presented = presentingHeaders.map { $0.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" } } ?? token.map { ["Authorization: Bearer " + $0] } ?? []
        if EndpointURL.problem(resource) == nil,
           let r = try? http.get(resource, endpoint: "the API (\(resource))", headers: presented),
           r.status == 401 || r.status == 403, let header = r.headers["www-authenticate"] {
            challenge = WWWAuthenticate(header).tokenChallenge
        }
        var stepUp = challenge?.error == "insufficient_scope" ? challenge?.scopes ?? [] : []
        for s in extra where !stepUp.contains(s) { stepUp.append(s) }
        return try configuration(for: resource, storeDirectory: storeDirectory, httpTimeout: httpTimeout, network: network, challenge: challenge, addingScopes: stepUp,
                                 clientMetadataDocument: clientMetadataDocument, registeringAgain: registeringAgain, allowingServerChange: allowingServerChange,
                                 readingMetadataAgain: true)
    }

    /// `configuration(for:storeDirectory:httpTimeout:challenge:addingScopes:clientMetadataDocument:)` for async code:
    /// the network and the store off Swift's cooperative pool, cancelled with the calling task (`.canceled`). Start it
    /// from a 401's or a 403's challenge (`WWWAuthenticate(header).tokenChallenge`).
    public static func configuration(for resource: String, storeDirectory: String, httpTimeout: Duration = .seconds(30), network: NetworkSettings = NetworkSettings(),
                                     challenge: WWWAuthenticate.Challenge?, addingScopes: [String], clientMetadataDocument: String? = nil) async throws(SignInError) -> SignInConfiguration {
        try await offPool("finding where to sign in") { (_) throws(SignInError) -> SignInConfiguration in
            try configuration(for: resource, storeDirectory: storeDirectory, httpTimeout: httpTimeout, network: network, challenge: challenge,
                              addingScopes: addingScopes, clientMetadataDocument: clientMetadataDocument)
        }
    }

    /// The configuration of an API signed in to from its address before, from the store alone (no network), or nil.
    /// `network`: as `configuration(for:storeDirectory:httpTimeout:network:)`'s, for the requests it configures.
    public static func knownConfiguration(for resource: String, storeDirectory: String, httpTimeout: Duration = .seconds(30), network: NetworkSettings = NetworkSettings()) -> SignInConfiguration? {
        let store = CredentialStore(directory: storeDirectory)
        guard let record = try? store.apiMetadata(resource: resource) else { return nil }
        return (try? known(resource, record, store, httpTimeout, network)) ?? nil
    }

    /// The configuration `record` (what the API said when signin asked) and the client kept for it make, or nil.
    private static func known(_ resource: String, _ record: ProtectedResourceMetadata?, _ store: CredentialStore,
                              _ httpTimeout: Duration, _ network: NetworkSettings) throws(SignInError) -> SignInConfiguration? {
        guard let record, let kept = try store.registration(issuer: record.authorizationServers[0], resource: resource) else { return nil }
        return configuration(resource, scopes: record.scopesAsked ?? defaultScopes(record, openID: kept.openID), kept, httpTimeout, network)
    }

    /// The scopes of a first sign-in: what the API lists (without OpenID's, which are the server's to list), and
    /// OpenID's for an OpenID provider.
    private static func defaultScopes(_ metadata: ProtectedResourceMetadata, openID: Bool) -> [String] {
        var scopes = metadata.scopesSupported?.filter { !["openid", "email", "profile"].contains($0) } ?? []
        if openID { for s in ["profile", "email", "openid"] where !scopes.contains(s) { scopes.insert(s, at: 0) } }
        return scopes
    }

    private static func configuration(_ resource: String, scopes: [String], _ client: ClientRegistration, _ httpTimeout: Duration, _ network: NetworkSettings) -> SignInConfiguration {
        var c = SignInConfiguration(clientID: client.clientID, clientSecret: client.clientSecret, scopes: scopes, issuer: client.issuer,
                                    redirectPort: client.redirectPort, redirectPath: client.redirectPath)
        c.resources = [resource]
        c.foundFromAPI = true
        c.clientKind = client.kind
        c.httpTimeout = httpTimeout
        c.network = network
        c.sourcePath = "the API's metadata (\(ProtectedResourceMetadata.url(for: resource) ?? resource))"
        return c
    }
}

extension ClientRegistration {
    /// Whether a client registered with these scopes may ask for `scopes` (a server that checks registered scopes
    /// refuses others at authorization). A client registered without saying takes what the server gives.
    func covers(_ scopes: [String]) -> Bool {
        guard kind == .registered, let registered = self.scopes else { return true }
        return scopes.allSatisfy { registered.contains($0) || ["openid", "email", "profile"].contains($0) && openID }
    }
}

/// A client ID metadata document (draft-ietf-oauth-client-id-metadata-document): what a person's organisation hosts at
/// an https URL so that signin can use that URL as its `client_id` at any server that takes such documents, with no
/// registration. Loopback redirect URIs without a port: the server lets the port vary (RFC 8252 7.3).
public enum ClientIDMetadataDocument {
    /// The document for `url` (its `client_id` must be the URL itself), as JSON text.
    public static func document(for url: String, clientName: String = "signin") -> String {
        let o: [String: JSONValueOut] = [
            "client_id": .string(url), "client_name": .string(clientName),
            "redirect_uris": .array([.string("http://127.0.0.1" + ClientRegistration.redirectPath), .string("http://[::1]" + ClientRegistration.redirectPath)]),
            "grant_types": .array([.string("authorization_code"), .string("refresh_token")]), "response_types": .array([.string("code")]),
            "token_endpoint_auth_method": .string("none"), "application_type": .string("native"),
        ]
        return JSONValueOut.object(o).text
    }
}
