import SignInBase
import SignInProtocol
import SignInStorage
import SignInTransport
import FoundationEssentials

/// Signing in to an API from its address alone, as the Model Context Protocol's authorization asks of every client:
/// the API says where to sign in (RFC 9728), signin registers itself there (RFC 7591) and signs in asking for that API
/// (RFC 8707). `signin login --resource URL` and `signin token --resource URL` with no configuration take this path.
public enum APIAccess {
    /// The configuration that signs in for the API at `resource`, with no configuration written by anyone.
    ///
    /// 1. The API's protected resource metadata (`/.well-known/oauth-protected-resource` + its path): a document for
    ///    another resource, or naming an authorization server that is not https (but on loopback), is refused.
    /// 2. The first authorization server it names. What the API said, and the registration kept for that server in the store at
    ///    `storeDirectory` (encrypted) is used as it is, with the port it was registered with.
    /// 3. Otherwise the server's metadata names its registration endpoint (none: `.unsupported`, saying to configure a
    ///    client by hand), a free loopback port is chosen, and signin registers as a public native client there
    ///    (one redirect URI on that port, PKCE, no secret); the registration is kept before it is used.
    /// 4. The configuration: that client at that server, its redirect port, the API as its one resource, and the
    ///    scopes OpenID needs with those the API lists.
    public static func configuration(for resource: String, storeDirectory: String, httpTimeout: Duration = .seconds(30)) throws(SignInError) -> SignInConfiguration {
        var probe = SignInConfiguration(clientID: "signin")
        probe.httpTimeout = httpTimeout
        let http = HTTPClient(configuration: probe)
        let store = CredentialStore(directory: storeDirectory)
        // Known from an earlier run (what the API said, and the client registered): no network.
        if let known = try store.apiMetadata(resource: resource), let kept = try store.registration(issuer: known.authorizationServers[0]) {
            return configuration(resource, known, kept, httpTimeout)
        }
        try HTTPClient.loadLibrary()
        let metadata = try ProtectedResourceMetadata.fetch(for: resource, http: http)
        let issuer = metadata.authorizationServers[0]
        let registration: ClientRegistration
        if let kept = try store.registration(issuer: issuer) {
            registration = kept
        } else {
            guard let endpoint = try Discovery.registrationEndpoint(issuer: issuer, http: http) else {
                throw .unsupported(reason: "\(issuer) (the authorization server of \(resource.withoutControlCharacters)) does not let clients register themselves (no registration_endpoint): register signin there by hand and write its configuration with `signin init`")
            }
            registration = try ClientRegistration.register(at: endpoint, issuer: issuer, port: try LoopbackServer.freeLoopbackPort(), http: http)
            try store.save(registration)
        }
        try store.save(metadata)
        return configuration(resource, metadata, registration, httpTimeout)
    }

    private static func configuration(_ resource: String, _ metadata: ProtectedResourceMetadata, _ registration: ClientRegistration,
                                      _ httpTimeout: Duration) -> SignInConfiguration {
        let issuer = registration.issuer
        var scopes = ["openid", "email", "profile"]
        for s in metadata.scopesSupported ?? [] where !scopes.contains(s) { scopes.append(s) }
        var c = SignInConfiguration(clientID: registration.clientID, clientSecret: registration.clientSecret, scopes: scopes, issuer: issuer,
                                    redirectPort: registration.redirectPort, redirectPath: registration.redirectPath)
        c.resources = [resource]
        c.httpTimeout = httpTimeout
        c.sourcePath = "the API's metadata (\(ProtectedResourceMetadata.url(for: resource) ?? resource))"
        return c
    }
}
