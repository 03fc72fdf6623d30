import FoundationEssentials

/// A token endpoint's answer (RFC 6749 5.1).
struct TokenResponse: Sendable {
    var accessToken: String
    var tokenType: String
    var expiresIn: Int?
    var refreshToken: String?
    var idToken: String?
    var scope: [String]?
}

/// Talks to the token, revocation, userinfo and device authorization endpoints. Secrets go in request bodies or
/// headers, never in URLs, and never in an error message.
struct TokenClient: Sendable {
    let config: Configuration
    let endpoints: Endpoints
    let http: HTTPClient

    init(config: Configuration, endpoints: Endpoints) {
        self.config = config
        self.endpoints = endpoints
        self.http = HTTPClient(configuration: config)
    }

    /// Client authentication: HTTP Basic when there is a secret (RFC 6749 2.3.1, which every provider must
    /// accept), else the client ID in the body (public client).
    private func clientAuth(_ form: inout [(String, String)]) -> [String] {
        guard let secret = config.clientSecret else {
            form.append(("client_id", config.clientID))
            return []
        }
        let pair = FormEncoding.escape(config.clientID) + ":" + FormEncoding.escape(secret)
        return ["Authorization: Basic " + Data(pair.utf8).base64EncodedString()]
    }

    func exchange(code: String, verifier: String, redirectURI: String) throws(SignInError) -> TokenResponse {
        var form = [("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirectURI), ("code_verifier", verifier)]
        let headers = clientAuth(&form)
        return try tokenRequest(form, headers: headers)
    }

    func refresh(_ refreshToken: String) throws(SignInError) -> TokenResponse {
        var form = [("grant_type", "refresh_token"), ("refresh_token", refreshToken)]
        let headers = clientAuth(&form)
        return try tokenRequest(form, headers: headers)
    }

    var tokenEndpointName: String { "token endpoint (\(endpoints.token))" }

    func tokenRequest(_ form: [(String, String)], headers: [String]) throws(SignInError) -> TokenResponse {
        let r = try http.postForm(endpoints.token, endpoint: tokenEndpointName, form: form, headers: headers)
        return try TokenClient.parseTokenResponse(r, endpoint: tokenEndpointName)
    }

    static func oauthError(_ r: HTTPResponse, endpoint: String) -> SignInError {
        if let o = JSONValue.object(from: r.body), let code = o["error"]?.string {
            return .providerError(endpoint: endpoint, code: code, detail: o["error_description"]?.string.map { String($0.prefix(300)) })
        }
        // Some providers answer a dead refresh token with 400 and an empty body.
        let detail = r.body.isEmpty ? "HTTP \(r.status) with an empty body" : "HTTP \(r.status), not an OAuth error response"
        return .providerError(endpoint: endpoint, code: "http_\(r.status)", detail: detail)
    }

    static func parseTokenResponse(_ r: HTTPResponse, endpoint: String) throws(SignInError) -> TokenResponse {
        guard r.status == 200 else { throw oauthError(r, endpoint: endpoint) }
        guard let o = JSONValue.object(from: r.body) else { throw .providerError(endpoint: endpoint, code: "invalid_response", detail: "the answer is not a JSON object") }
        guard let access = o["access_token"]?.string, !access.isEmpty else {
            if let code = o["error"]?.string { throw .providerError(endpoint: endpoint, code: code, detail: o["error_description"]?.string) }
            throw .providerError(endpoint: endpoint, code: "invalid_response", detail: "no access_token")
        }
        guard let type = o["token_type"]?.string, type.lowercased() == "bearer" else {
            throw .providerError(endpoint: endpoint, code: "invalid_response", detail: "token_type is not Bearer")
        }
        let expires = o["expires_in"]?.int
        if let e = expires, e < 0 || e > 10 * 365 * 86400 { throw .providerError(endpoint: endpoint, code: "invalid_response", detail: "expires_in out of range") }
        return TokenResponse(accessToken: access, tokenType: type, expiresIn: expires,
                             refreshToken: o["refresh_token"]?.string.flatMap { $0.isEmpty ? nil : $0 },
                             idToken: o["id_token"]?.string, scope: o["scope"]?.string?.split(separator: " ").map(String.init))
    }

    /// RFC 7009. Google and most providers take the refresh token (which revokes the whole grant).
    func revoke(token: String, hint: String, accessToken: String?) throws(SignInError) {
        guard let url = endpoints.revocation else { throw .unsupported(reason: "The provider has no revocation endpoint; set \"revocation_endpoint\" in the configuration.") }
        var form = [("token", token), ("token_type_hint", hint)]
        var headers = clientAuth(&form)
        if config.clientSecret == nil, let accessToken { headers.append("Authorization: Bearer \(accessToken)") }
        let name = "revocation endpoint (\(url))"
        let r = try http.postForm(url, endpoint: name, form: form, headers: headers)
        guard r.status == 200 else { throw TokenClient.oauthError(r, endpoint: name) }
    }

    func userinfo(accessToken: String) throws(SignInError) -> [String: JSONValue]? {
        guard let url = endpoints.userinfo else { return nil }
        let r = try http.get(url, endpoint: "userinfo endpoint (\(url))", headers: ["Authorization: Bearer \(accessToken)"])
        guard r.status == 200 else { return nil }
        return JSONValue.object(from: r.body)
    }
}
