import SignInBase
import SignInTransport
import FoundationEssentials

/// Talks to the token, revocation and userinfo endpoints (RFC 6749, RFC 7009, OpenID Core 5.3). Secrets go in
/// request bodies or headers, never in URLs, and never in an error message.
package struct TokenClient: Sendable {
    package let config: SignInConfiguration
    package let endpoints: ProviderEndpoints
    package let http: HTTPClient
    package let client: ClientAuthentication
    /// The key the grant is bound to (DPoP, RFC 9449): every request to the token and revocation endpoints then
    /// carries a proof made with it. Nil: plain bearer tokens.
    package var proofKey: ProofKey?

    package init(config: SignInConfiguration, endpoints: ProviderEndpoints) {
        self.config = config
        self.endpoints = endpoints
        self.http = HTTPClient(configuration: config)
        self.client = ClientAuthentication(clientID: config.clientID, clientSecret: config.clientSecret)
    }

    package var tokenEndpointName: String { "token endpoint (\(endpoints.token))" }

    /// The authorization code grant's exchange (RFC 6749 4.1.3, with the PKCE verifier of RFC 7636).
    /// A grant for one API (`SignInConfiguration.grantAPI`) names it here too (RFC 8707 2.2).
    package func exchange(code: String, verifier: String, redirectURI: String) throws(SignInError) -> TokenResponse {
        var form = [("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirectURI), ("code_verifier", verifier)]
        if let api = config.grantAPI { form.append(("resource", api)) }
        return try targeted(config.grantAPI) { () throws(SignInError) in try tokenRequest(form) }
    }

    /// A refresh (RFC 6749 6). A 400 with an empty body is how some providers refuse a dead refresh token: it is
    /// reported as `invalid_grant`, which is what it means.
    /// With `resource` (RFC 8707 2.2): an access token for that resource alone; a resource the provider will not
    /// serve (`invalid_target`) is `.targetRefused`.
    /// An answer refused for anything (a lifetime, a token type, a malformed access token) that still carries a
    /// rotated refresh token hands it to `keepRotated` before the refusal is thrown: the old one is spent, so the new
    /// one is the grant and must be saved whatever else is wrong.
    package func refresh(_ refreshToken: String, resource: String? = nil,
                         keepRotated: (String) throws(SignInError) -> Void = { _ in }) throws(SignInError) -> TokenResponse {
        var form = [("grant_type", "refresh_token"), ("refresh_token", refreshToken)]
        if let resource { form.append(("resource", resource)) }
        let r = try post(form, style: .basicHeader)
        if r.status == 400 && r.body.isEmpty {
            throw OAuthError.make(code: "invalid_grant", description: "HTTP 400 with an empty body (this provider's way of refusing a refresh token)", endpoint: tokenEndpointName)
        }
        do throws(SignInError) {
            return try targeted(resource) { () throws(SignInError) in try TokenResponse.parse(r, endpoint: tokenEndpointName, proofSent: proofKey != nil) }
        } catch {
            if let rotated = TokenResponse.refreshToken(in: r), rotated != refreshToken { try keepRotated(rotated) }
            throw error
        }
    }

    /// OAuth 2.0 Token Exchange (RFC 8693 2.1) at this provider's token endpoint: `subjectToken` (the person's access
    /// token, or ID token) traded for a token for `audience` (and `resource`), with the client's usual
    /// authentication and, for a bound grant, a DPoP proof. A refused audience (`invalid_target`) is `.targetRefused`.
    package func exchange(subjectToken: String, subjectTokenType: String, audience: String?, resource: String?, requestedTokenType: String?) throws(SignInError) -> TokenResponse {
        var form = [("grant_type", TokenExchange.grantType), ("subject_token", subjectToken), ("subject_token_type", subjectTokenType)]
        if let audience { form.append(("audience", audience)) }
        if let resource { form.append(("resource", resource)) }
        if let requestedTokenType { form.append(("requested_token_type", requestedTokenType)) }
        return try targeted(audience ?? resource) { () throws(SignInError) in try tokenRequest(form).checkedAsAccessToken(endpoint: tokenEndpointName) }
    }

    /// `invalid_target` (RFC 8707 2, RFC 8693 2.2.2) said of `target` is its own error.
    private func targeted(_ target: String?, _ body: () throws(SignInError) -> TokenResponse) throws(SignInError) -> TokenResponse {
        do throws(SignInError) { return try body() } catch .providerError(let endpoint, "invalid_target", let detail) where target != nil {
            throw .targetRefused(endpoint: endpoint, target: target!, detail: detail)
        }
    }

    package func tokenRequest(_ form: [(String, String)], style: ClientAuthentication.Style = .basicHeader) throws(SignInError) -> TokenResponse {
        try TokenResponse.parse(try post(form, style: style), endpoint: tokenEndpointName, proofSent: proofKey != nil)
    }

    /// How the secret goes to the token endpoint: the configuration's `token_endpoint_auth_method`, else what the
    /// provider's discovery document offers (Basic first, as RFC 6749 2.3.1 has every server accept it).
    var authenticationStyle: ClientAuthentication.Style {
        switch config.tokenEndpointAuthMethod {
        case "client_secret_post"?: return .formBody
        case "client_secret_basic"?: return .basicHeader
        default:
            guard let offered = endpoints.tokenEndpointAuthMethods, !offered.contains("client_secret_basic"), offered.contains("client_secret_post") else { return .basicHeader }
            return .formBody
        }
    }

    /// POSTs a form to the token endpoint with the client's credentials. A provider that decodes HTTP Basic
    /// credentials without form-decoding them (django-oidc-provider) refuses a secret with reserved characters
    /// as `invalid_client`: then, unless the configuration chose the method, the body is tried once, as
    /// golang.org/x/oauth2's auto-detection does.
    private func post(_ form: [(String, String)], style requested: ClientAuthentication.Style) throws(SignInError) -> HTTPResponse {
        let style = requested == .basicHeader ? authenticationStyle : requested
        func send(_ style: ClientAuthentication.Style) throws(SignInError) -> HTTPResponse {
            var form = form
            var headers: [String] = []
            client.apply(style, form: &form, headers: &headers)
            return try postWithProof(endpoints.token, endpoint: tokenEndpointName, form: form, headers: headers)
        }
        let r = try send(style)
        if style == .basicHeader, config.tokenEndpointAuthMethod == nil, let secret = config.clientSecret, FormEncoding.escape(secret) != secret,
           r.status == 400 || r.status == 401, JSONValue.object(from: r.body)?["error"]?.string == "invalid_client" {
            return try send(.formBody)
        }
        return r
    }

    /// POSTs a form, with a DPoP proof when the grant is bound to a key. A server that answers `use_dpop_nonce`
    /// with a `DPoP-Nonce` header gets the request once more with a proof that carries its nonce (RFC 9449 8).
    /// `presenting`: an access token the request shows in `Authorization: DPoP` (the proof then names it, `ath`).
    private func postWithProof(_ url: String, endpoint: String, form: [(String, String)], headers: [String], presenting accessToken: String? = nil) throws(SignInError) -> HTTPResponse {
        guard let proofKey else { return try http.postForm(url, endpoint: endpoint, form: form, headers: headers) }
        func send(_ nonce: String?) throws(SignInError) -> HTTPResponse {
            let proof = try DPoP.proof(proofKey, method: "POST", url: url, nonce: nonce, accessToken: accessToken)
            return try http.postForm(url, endpoint: endpoint, form: form, headers: headers + ["DPoP: " + proof])
        }
        let first = try send(nil)
        guard let nonce = Self.nonceChallenge(first) else { return first }
        return try send(nonce)
    }

    /// The nonce a server asks the next proof to carry (RFC 9449 8: 400 or 401 with `use_dpop_nonce` and a
    /// `DPoP-Nonce` header of visible ASCII, at most 1 KiB), or nil.
    package static func nonceChallenge(_ r: HTTPResponse) -> String? {
        guard r.status == 400 || r.status == 401, let nonce = r.headers["dpop-nonce"], TokenResponse.isTokenText(nonce), nonce.utf8.count <= 1024,
              JSONValue.object(from: r.body)?["error"]?.string == DPoP.useNonceError || r.headers["www-authenticate"]?.contains(DPoP.useNonceError) == true
        else { return nil }
        return nonce
    }

    /// Pushes an authorization request's parameters (RFC 9126 2.1), with the client's credentials as the token
    /// endpoint takes them, to `url`; its `request_uri` (2.2).
    func pushAuthorization(_ params: [(String, String)], to url: String) throws(SignInError) -> String {
        var form = params.filter { $0.0 != "client_id" }
        var headers: [String] = []
        client.apply(authenticationStyle, form: &form, headers: &headers)
        // The request names its client in the body whatever the authentication (RFC 9126 2.1).
        if !form.contains(where: { $0.0 == "client_id" }) { form.append(("client_id", config.clientID)) }
        let name = "pushed authorization request endpoint (\(url))"
        return try Self.requestURI(from: try http.postForm(url, endpoint: name, form: form, headers: headers), endpoint: name)
    }

    /// The `request_uri` of a pushed authorization request's answer (RFC 9126 2.2), or the refusal as an error.
    package static func requestURI(from r: HTTPResponse, endpoint name: String) throws(SignInError) -> String {
        guard r.status == 201 || r.status == 200 else { throw OAuthError.from(r, endpoint: name) }
        guard let o = JSONValue.object(from: r.body), let uri = o["request_uri"]?.string, !uri.isEmpty, TokenResponse.isTokenText(uri), uri.utf8.count <= 2048 else {
            throw .providerError(endpoint: name, code: "invalid_response", detail: "the answer has no usable request_uri")
        }
        return uri
    }

    /// RFC 7009 at `url`. Google and most providers take the refresh token (which revokes the whole grant).
    package func revoke(token: String, hint: String, accessToken: String?, at url: String) throws(SignInError) {
        var form = [("token", token), ("token_type_hint", hint)]
        var headers: [String] = []
        client.apply(.basicHeader, form: &form, headers: &headers)
        // A public client may have to show it holds the grant (some providers demand it): a DPoP-bound token with
        // a proof that names it.
        var presented: String?
        if config.clientSecret == nil, let accessToken {
            headers.append((proofKey == nil ? "Authorization: Bearer " : "Authorization: DPoP ") + accessToken)
            presented = accessToken
        }
        let name = "revocation endpoint (\(url))"
        let r = try postWithProof(url, endpoint: name, form: form, headers: headers, presenting: presented)
        guard r.status == 200 else { throw OAuthError.from(r, endpoint: name) }
    }

    /// The userinfo endpoint's claims (OpenID Core 5.3); an error when the provider has no such endpoint or
    /// does not answer with them.
    /// A DPoP-bound token (`tokenType` `DPoP`, with `proofKey`) is shown as `Authorization: DPoP` with a proof for
    /// this GET (RFC 9449 7), and again with the server's nonce when it asks for one; a bearer token as `Bearer`.
    package func userinfo(accessToken: String, tokenType: String = "Bearer") throws(SignInError) -> [String: JSONValue] {
        guard let url = endpoints.userinfo else { throw .unsupported(reason: "The provider \(config.issuer) has no userinfo endpoint.") }
        let name = "userinfo endpoint (\(url))"
        let r: HTTPResponse
        if tokenType == "DPoP", let proofKey {
            func send(_ nonce: String?) throws(SignInError) -> HTTPResponse {
                let proof = try DPoP.proof(proofKey, method: "GET", url: url, nonce: nonce, accessToken: accessToken)
                return try http.get(url, endpoint: name, headers: ["Authorization: DPoP \(accessToken)", "DPoP: " + proof])
            }
            let first = try send(nil)
            if first.status == 401, let nonce = first.headers["dpop-nonce"], TokenResponse.isTokenText(nonce), nonce.utf8.count <= 1024 {
                r = try send(nonce)
            } else {
                r = first
            }
        } else {
            r = try http.get(url, endpoint: name, headers: ["Authorization: Bearer \(accessToken)"])
        }
        guard r.status == 200, let claims = JSONValue.object(from: r.body) else { throw OAuthError.from(r, endpoint: name) }
        return claims
    }
}
