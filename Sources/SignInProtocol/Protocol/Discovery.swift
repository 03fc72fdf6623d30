import SignInBase
import SignInTransport
import FoundationEssentials

/// OpenID Connect Discovery 1.0 (`<issuer>/.well-known/openid-configuration`), and OAuth 2.0 Authorization
/// Server Metadata (RFC 8414) for what some providers list only there.
///
/// Blame goes where the fault is: a bad URL the person configured is a configuration error (found when the
/// configuration loads); a bad URL in the provider's document is a provider error.
package enum Discovery {
    package static func endpoints(for config: SignInConfiguration, http: HTTPClient) throws(SignInError) -> ProviderEndpoints {
        try endpoints(for: config, fetched: nil, http: http)
    }

    /// `endpoints(for:http:)` from the server's metadata already read for this issuer (`fetched`, as
    /// `discoveredServer` answers it), so that a sign-in from an API's address reads it once.
    package static func endpoints(for config: SignInConfiguration, fetched: AuthorizationServerMetadata?,
                                  http: HTTPClient) throws(SignInError) -> ProviderEndpoints {
        let o = config.endpoints
        // A configuration built in code has not been through the file checks: the same rules apply to it.
        if let problem = EndpointURL.problem(config.issuer) {
            throw .configInvalid(file: config.sourcePath, field: "issuer", reason: problem)
        }
        // An empty document, for a configuration that names every endpoint it needs: then no metadata is read.
        var doc = AuthorizationServerMetadata(document: [:], url: "")
        // A plain OAuth 2.0 server needs no JWKS: an ID token is expected only when `openid` is asked.
        let needsJWKS = config.asksForIDToken
        var fromOAuthMetadata = false
        if o.authorization == nil || o.token == nil || (needsJWKS && o.jwks == nil) {
            if let fetched { doc = fetched } else { doc = try metadataDocument(for: config, http: http) }
            fromOAuthMetadata = doc.isOAuthMetadata
            // An RFC 8414 document need not name what OpenID needs (RFC 8414 makes jwks_uri optional): where OpenID is
            // wanted, the same issuer's OpenID document (checked to name the same issuer) gives what it lacks.
            if fromOAuthMetadata, needsJWKS, o.jwks == nil, doc.jwksURI == nil || doc.userinfoEndpoint == nil {
                for other in openIDDocumentURLs(issuer: config.issuer) {
                    guard let openID = try? metadata(at: other, issuer: config.issuer, http: http) else { continue }
                    doc = doc.completed(by: openID)
                    fromOAuthMetadata = false
                    break
                }
            }
        }
        func pick(_ override: String?, _ key: String, _ member: KeyPath<AuthorizationServerMetadata, String?>, required: Bool) throws(SignInError) -> String? {
            if let override {
                if let problem = EndpointURL.problem(override) { throw .configInvalid(file: config.sourcePath, field: key, reason: problem) }
                return override
            }
            guard let v = doc[keyPath: member] else {
                if required { throw .providerError(endpoint: "discovery document", code: "missing_\(key)", detail: "set \"\(key)\" in the configuration") }
                return nil
            }
            if let problem = EndpointURL.problem(v) {
                throw .providerError(endpoint: "discovery document", code: "invalid_\(key)", detail: problem)
            }
            return v
        }
        var endpoints = ProviderEndpoints(
            issuer: config.issuer,
            authorization: try pick(o.authorization, "authorization_endpoint", \.authorizationEndpoint, required: true)!,
            token: try pick(o.token, "token_endpoint", \.tokenEndpoint, required: true)!,
            // A plain OAuth 2.0 server (RFC 8414 metadata, no OpenID document) issues no ID token: none is needed.
            jwks: try pick(o.jwks, "jwks_uri", \.jwksURI, required: needsJWKS && !fromOAuthMetadata) ?? "",
            revocation: try pick(o.revocation, "revocation_endpoint", \.revocationEndpoint, required: false),
            userinfo: try pick(o.userinfo, "userinfo_endpoint", \.userinfoEndpoint, required: false),
            deviceAuthorization: try pick(o.deviceAuthorization, "device_authorization_endpoint", \.deviceAuthorizationEndpoint, required: false)
                ?? config.providerRules.deviceAuthorizationEndpoint,
            issuerParameterSupported: doc.authorizationResponseIssParameterSupported == true ? true : nil,
            tokenEndpointAuthMethods: doc.tokenEndpointAuthMethodsSupported,
            grantTypesSupported: doc.grantTypesSupported,
            pushedAuthorization: try pick(o.pushedAuthorization, "pushed_authorization_request_endpoint", \.pushedAuthorizationRequestEndpoint, required: false),
            pushedAuthorizationRequired: doc.requirePushedAuthorizationRequests == true ? true : nil,
            dpopSigningAlgorithms: doc.dpopSigningAlgValuesSupported)
        endpoints.scopesSupported = doc.scopesSupported
        return endpoints
    }

    /// The server's metadata for `config`: OpenID discovery, else RFC 8414 authorization server metadata, in the order
    /// that fits how the server came to be known. A configured issuer (an OpenID provider, most often) is asked at
    /// `/.well-known/openid-configuration` first, then RFC 8414 with its path inserted, then OpenID with it inserted; a
    /// server found from an API in the Model Context Protocol's order (`discoveryURLs`). The first document that
    /// answers for this issuer is taken; when none does, the first one's error is reported.
    package static func metadataDocument(for config: SignInConfiguration, http: HTTPClient) throws(SignInError) -> AuthorizationServerMetadata {
        let trimmed = config.issuer.hasSuffix("/") ? String(config.issuer.dropLast()) : config.issuer
        var urls = discoveryURLs(issuer: config.issuer)
        if !config.foundFromAPI {
            let openID = trimmed + "/.well-known/openid-configuration"
            urls.removeAll { $0 == openID }
            urls.insert(openID, at: 0)
        }
        var firstError: SignInError?
        for url in urls {
            do throws(SignInError) { return try metadata(at: url, issuer: config.issuer, http: http) } catch {
                if case .networkUnavailable = error { throw error }
                // Another issuer's document is a mix-up, not a missing document: said at once.
                if case .providerError(_, "issuer_mismatch", _) = error { throw error }
                firstError = firstError ?? error
            }
        }
        throw firstError ?? .providerError(endpoint: "discovery document", code: "no_metadata", detail: "the provider publishes no metadata")
    }

    /// The revocation endpoint from RFC 8414 metadata, for providers that list it only there (Django OAuth
    /// Toolkit). Tries `https://host/.well-known/oauth-authorization-server/<path>` (RFC 8414 3.1) and then the
    /// form with the suffix appended to the issuer, which some providers use. Nil when neither names one.
    /// The revocation endpoint in RFC 8414 metadata, or nil when the provider answered without one. When no
    /// metadata URL could be reached at all, the network failure is thrown (the provider is down, not lacking).
    package static func revocationFromAuthorizationServerMetadata(issuer: String, http: HTTPClient) throws(SignInError) -> String? {
        var unreachable: SignInError?
        var answered = false
        for url in authorizationServerMetadataURLs(issuer: issuer) {
            let doc: AuthorizationServerMetadata
            do { doc = try metadata(at: url, issuer: issuer, http: http) } catch {
                if case .networkUnavailable = error { unreachable = unreachable ?? error } else { answered = true }
                continue
            }
            answered = true
            guard let v = doc.revocationEndpoint, EndpointURL.problem(v) == nil else { continue }
            return v
        }
        if !answered, let unreachable { throw unreachable }
        return nil
    }

    /// The metadata of an authorization server found from an API (not configured by the person), in the order the
    /// Model Context Protocol's authorization (2025-11-25) gives: for an issuer with a path, RFC 8414 with the path
    /// inserted, OpenID with the path inserted, OpenID with the path appended; without one, RFC 8414 then OpenID.
    /// Refused, as that specification and RFC 8414 2 require: an issuer with a query or a fragment, and a server whose
    /// metadata does not list `S256` in `code_challenge_methods_supported` (PKCE cannot be relied on there).
    package static func discoveredServer(issuer: String, http: HTTPClient) throws(SignInError) -> AuthorizationServerMetadata {
        if let problem = issuerProblem(issuer) {
            throw .providerError(endpoint: "the authorization server \(issuer.withoutControlCharacters)", code: "invalid_issuer", detail: problem)
        }
        var lastError: SignInError?
        for url in discoveryURLs(issuer: issuer) {
            let doc: AuthorizationServerMetadata
            do { doc = try metadata(at: url, issuer: issuer, http: http) } catch {
                // Another document may answer; a server that cannot be reached at all cannot, and a document for
                // another issuer is a mix-up (or a server that spells its own name otherwise), said as what it is.
                if case .networkUnavailable = error { throw error }
                if case .providerError(_, "issuer_mismatch", _) = error { throw error }
                lastError = error
                continue
            }
            let listed = doc.codeChallengeMethodsSupported
            guard let listed, listed.contains("S256") else {
                let methods = listed ?? []
                throw .providerError(endpoint: "discovery document (\(url))", code: "pkce_not_supported",
                                     detail: listed == nil
                                        ? "it does not list code_challenge_methods_supported, so PKCE with S256 cannot be relied on; signin does not sign in there"
                                        : "its code_challenge_methods_supported does not list S256 (\(methods.joined(separator: ", ").withoutControlCharacters.prefix(100))); signin does not sign in there")
            }
            return doc
        }
        throw lastError ?? .providerError(endpoint: "the authorization server \(issuer)", code: "no_metadata", detail: "it publishes no metadata")
    }

    /// Why `issuer` cannot be an authorization server's identifier (RFC 8414 2: https, or http on loopback, with no
    /// query and no fragment), or nil.
    package static func issuerProblem(_ issuer: String) -> String? {
        if let problem = EndpointURL.problem(issuer) { return problem }
        if issuer.contains("?") || issuer.contains("#") { return "an issuer has no query and no fragment (RFC 8414 2)" }
        return nil
    }

    /// The metadata URLs of a discovered server, in the order `discoveredServer` tries them.
    package static func discoveryURLs(issuer: String) -> [String] {
        let trimmed = issuer.hasSuffix("/") ? String(issuer.dropLast()) : issuer
        return (EndpointURL.wellKnown("oauth-authorization-server", insertedInto: trimmed).map { [$0] } ?? []) + openIDDocumentURLs(issuer: issuer)
    }

    /// The OpenID discovery URLs of `issuer`: with its path inserted (an issuer with a path), then appended.
    static func openIDDocumentURLs(issuer: String) -> [String] {
        let trimmed = issuer.hasSuffix("/") ? String(issuer.dropLast()) : issuer
        var urls: [String] = []
        if let inserted = EndpointURL.wellKnown("openid-configuration", insertedInto: trimmed) { urls.append(inserted) }
        if !urls.contains(trimmed + "/.well-known/openid-configuration") { urls.append(trimmed + "/.well-known/openid-configuration") }
        return urls
    }

    static func authorizationServerMetadataURLs(issuer: String) -> [String] {
        let suffix = "/.well-known/oauth-authorization-server"
        let trimmed = issuer.hasSuffix("/") ? String(issuer.dropLast()) : issuer
        var urls: [String] = []
        if let inserted = EndpointURL.wellKnown("oauth-authorization-server", insertedInto: trimmed) { urls.append(inserted) }
        if !urls.contains(trimmed + suffix) { urls.append(trimmed + suffix) }
        return urls
    }

    /// Fetches a metadata document and checks that it is for `issuer`: a document for another issuer is how a
    /// mix-up attack starts (RFC 9207, OpenID Discovery 4.3).
    private static func metadata(at url: String, issuer: String, http: HTTPClient) throws(SignInError) -> AuthorizationServerMetadata {
        let endpoint = "discovery document (\(url))"
        let r = try http.get(url, endpoint: endpoint)
        guard r.status == 200 else {
            throw .providerError(endpoint: endpoint, code: "http_\(r.status)", detail: "expected 200")
        }
        guard let d = JSONValue.object(from: r.body) else {
            throw .providerError(endpoint: endpoint, code: "invalid_response", detail: "not a JSON object")
        }
        guard let iss = d["issuer"]?.string, Issuer.same(iss, issuer) else {
            throw .providerError(endpoint: endpoint, code: "issuer_mismatch",
                                 detail: "the document names its issuer \"\((d["issuer"]?.string ?? "(none)").withoutControlCharacters)\", but the server was named \"\(issuer.withoutControlCharacters)\" (by the configuration or the API): issuers must match exactly (RFC 8414 3.3), so nothing is sent there")
        }
        return AuthorizationServerMetadata(document: d, url: url)
    }
}
