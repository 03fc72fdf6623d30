import SignInBase
import SignInTransport
import FoundationEssentials

/// OAuth 2.0 Protected Resource Metadata (RFC 9728): what an API publishes about itself, above all which
/// authorization servers issue tokens for it.
package struct ProtectedResourceMetadata: Sendable, Equatable {
    /// The API's resource identifier, as the metadata states it: it must be the URL asked for (RFC 9728 3.3).
    package let resource: String
    /// The authorization servers that issue tokens for it (issuer identifiers), in the API's order.
    package let authorizationServers: [String]
    /// The scopes it says it takes, when said.
    package let scopesSupported: [String]?
    /// The scopes signed in for it last (kept with the record): what a step-up adds to.
    package var scopesAsked: [String]? = nil

    /// Where the metadata of `resource` is (RFC 9728 3.1): `/.well-known/oauth-protected-resource` between the host and
    /// the path of the resource's URL. Nil for a URL that is not an absolute http(s) one.
    package static func url(for resource: String) -> String? {
        guard let scheme = URL(string: resource)?.scheme?.lowercased(), scheme == "https" || scheme == "http" else { return nil }
        return EndpointURL.wellKnown("oauth-protected-resource", insertedInto: resource)
    }

    /// Fetches and checks the metadata of `resource`: an answer for another resource, or naming an authorization
    /// server that is not https (but on loopback), is refused (a mix-up, or tokens sent in the clear).
    ///
    /// Where it is, in the order the Model Context Protocol's authorization gives: the `resource_metadata` of
    /// `challenge` when a 401 named it; else the API is asked itself (a request without a token) and its 401's
    /// `WWW-Authenticate` read; else the well-known URL with the API's path inserted, then at the host's root. The
    /// challenge's `scope` (the scopes the API wants) comes back with the metadata.
    package static func discover(for resource: String, challenge: WWWAuthenticate.Challenge? = nil, http: HTTPClient) throws(SignInError) -> (metadata: ProtectedResourceMetadata, challengeScopes: [String]?) {
        if let problem = EndpointURL.problem(resource) {
            throw .unsupported(reason: "--resource \(resource.withoutControlCharacters): \(problem)")
        }
        guard let inserted = url(for: resource) else { throw .unsupported(reason: "--resource \(resource.withoutControlCharacters) is not an absolute http(s) URL") }
        var asked = challenge
        if asked == nil {
            // The API itself, without a token: an MCP server answers 401 naming its metadata.
            if let r = try? http.get(resource, endpoint: "the API (\(resource))"), r.status == 401 || r.status == 403,
               let header = r.headers["www-authenticate"] {
                asked = WWWAuthenticate(header).tokenChallenge
            }
        }
        var candidates: [String] = []
        if let named = asked?.resourceMetadata, EndpointURL.problem(named) == nil { candidates.append(named) }
        candidates.append(inserted)
        if let root = EndpointURL.wellKnown("oauth-protected-resource", insertedInto: rootOf(resource)), !candidates.contains(root) { candidates.append(root) }
        var firstError: SignInError?
        for url in candidates {
            do throws(SignInError) { return (try fetch(url, for: resource, http: http), asked?.scopes) } catch {
                if case .networkUnavailable = error { throw error }
                // Metadata that answers for another resource is a mix-up: said at once, never passed over.
                if case .providerError(_, let code, _) = error, !code.hasPrefix("http_") { throw error }
                firstError = firstError ?? error
            }
        }
        throw firstError!
    }

    /// `resource`'s scheme and authority alone.
    private static func rootOf(_ resource: String) -> String {
        guard let schemeEnd = resource.firstRange(of: "://") else { return resource }
        let rest: Substring = resource[schemeEnd.upperBound...]
        let separators: Set<Character> = ["/", "?", "#"]
        let end: String.Index = rest.firstIndex(where: { separators.contains($0) }) ?? rest.endIndex
        return String(resource[..<end])
    }

    /// The metadata at `url`, checked for `resource`.
    private static func fetch(_ url: String, for resource: String, http: HTTPClient) throws(SignInError) -> ProtectedResourceMetadata {
        let endpoint = "the API's metadata (\(url))"
        let r = try http.get(url, endpoint: endpoint)
        guard r.status == 200 else {
            throw .providerError(endpoint: endpoint, code: "http_\(r.status)", detail: "the API publishes no protected resource metadata (RFC 9728) there; configure its provider instead (`signin init`)")
        }
        guard let doc = JSONValue.object(from: r.body) else { throw .providerError(endpoint: endpoint, code: "invalid_response", detail: "not a JSON object") }
        return try parse(doc, for: resource, endpoint: endpoint)
    }

    package static func parse(_ doc: [String: JSONValue], for resource: String, endpoint: String) throws(SignInError) -> ProtectedResourceMetadata {
        guard let stated = doc["resource"]?.string, stated == resource else {
            throw .providerError(endpoint: endpoint, code: "resource_mismatch",
                                 detail: "the metadata is for \"\((doc["resource"]?.string ?? "(none)").withoutControlCharacters)\", not \(resource.withoutControlCharacters): refused (RFC 9728 3.3)")
        }
        let servers = doc["authorization_servers"]?.array?.compactMap(\.string) ?? []
        guard !servers.isEmpty else {
            throw .providerError(endpoint: endpoint, code: "missing_authorization_servers", detail: "the metadata names no authorization server")
        }
        for s in servers where EndpointURL.problem(s) != nil {
            throw .providerError(endpoint: endpoint, code: "invalid_authorization_server", detail: "\(s.withoutControlCharacters): \(EndpointURL.problem(s)!)")
        }
        return ProtectedResourceMetadata(resource: stated, authorizationServers: servers, scopesSupported: doc["scopes_supported"]?.array?.compactMap(\.string))
    }

    package init(resource: String, authorizationServers: [String], scopesSupported: [String]? = nil) {
        self.resource = resource
        self.authorizationServers = authorizationServers
        self.scopesSupported = scopesSupported
    }
}
