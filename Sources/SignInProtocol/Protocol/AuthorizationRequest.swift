import SignInBase
import SignInTransport

/// One authorization request (RFC 6749 4.1 with PKCE): the URL to open, and the secrets to check the answer with.
///
/// Pushed first (RFC 9126) when the configuration's `pushed_authorization` and the provider say so: `auto` where
/// discovery lists the endpoint, `always` (the endpoint must be there), `never` (refused for a provider that
/// requires it). Then the parameters go to the provider in a POST with the client's credentials, and the URL the
/// browser opens carries `client_id`, the `request_uri` it answered, and the OAuth 2.0 required `response_type`,
/// `scope` and `redirect_uri` repeated (RFC 9101 5): no state, nonce or challenge is on the URL.
package struct AuthorizationRequest: Sendable, CustomStringConvertible {
    package let state: String
    package let nonce: String
    package let pkce: PKCE
    package let redirectURI: String
    package let url: String
    package let scopes: [String]

    /// Never the state, nonce or verifier.
    package var description: String { "AuthorizationRequest(redirect \(redirectURI), scopes \(scopes.joined(separator: " ")))" }

    package init(config: SignInConfiguration, endpoints: ProviderEndpoints, redirectURI: String, scopes: [String], loginHint: String?) throws(SignInError) {
        state = Base64URL.encode(try Crypto.randomBytes(32))
        nonce = Base64URL.encode(try Crypto.randomBytes(32))
        pkce = try PKCE()
        self.redirectURI = redirectURI
        self.scopes = scopes
        var params: [(String, String)] = [
            ("response_type", "code"),
            ("client_id", config.clientID),
            ("redirect_uri", redirectURI),
            ("scope", scopes.joined(separator: " ")),
            ("state", state),
            ("nonce", nonce),
            ("code_challenge", pkce.challenge),
            ("code_challenge_method", PKCE.method),
        ]
        params += config.providerRules.authorizationParameters
        if let hint = loginHint ?? config.loginHint { params.append(("login_hint", hint)) }
        for section in config.givenSections { params += section.authorizationParameters }
        // RFC 8707 2.1: one `resource` per API the grant is for; each can then be asked for alone at a refresh.
        for r in config.resources { params.append(("resource", r)) }
        for (k, v) in config.extraAuthorizationParameters.sorted(by: { $0.key < $1.key }) { params.append((k, v)) }
        // OpenID Core 11: a request for offline_access must carry prompt=consent (certified providers refuse it
        // otherwise); unless the configuration chose a prompt itself.
        if scopes.contains("offline_access") && !params.contains(where: { $0.0 == "prompt" }) { params.append(("prompt", "consent")) }
        let base = endpoints.authorization
        let separator = base.contains("?") ? "&" : "?"
        guard let parEndpoint = try Self.pushedEndpoint(config: config, endpoints: endpoints) else {
            url = base + separator + FormEncoding.encode(params)
            return
        }
        let requestURI = try TokenClient(config: config, endpoints: endpoints).pushAuthorization(params, to: parEndpoint)
        // RFC 9101 5: the OAuth 2.0 required parameters may be repeated beside request_uri (the server uses the
        // pushed ones); some servers (idpyoidc) check response_type and redirect_uri before swapping in the pushed
        // request. Never the state, the nonce or the PKCE challenge: those stay in the pushed request alone.
        // idpyoidc 5 reads `prompt` from the URL as well (a pushed `prompt=consent` alone ends in "consent in
        // prompt"), so a prompt that was pushed is repeated too.
        var repeated = [("client_id", config.clientID), ("request_uri", requestURI), ("response_type", "code"),
                        ("scope", scopes.joined(separator: " ")), ("redirect_uri", redirectURI)]
        if let prompt = params.first(where: { $0.0 == "prompt" }) { repeated.append(prompt) }
        url = base + separator + FormEncoding.encode(repeated)
    }

    /// Where to push the request, or nil not to.
    static func pushedEndpoint(config: SignInConfiguration, endpoints: ProviderEndpoints) throws(SignInError) -> String? {
        switch config.pushedAuthorization {
        case .never:
            if endpoints.pushedAuthorizationRequired == true {
                throw .configInvalid(file: config.sourcePath, field: "pushed_authorization",
                                     reason: "is never, but the provider accepts only pushed authorization requests (require_pushed_authorization_requests): set it to auto")
            }
            return nil
        case .always:
            guard let e = endpoints.pushedAuthorization else {
                throw .providerError(endpoint: "discovery document", code: "missing_pushed_authorization_request_endpoint",
                                     detail: "pushed_authorization is always, and the provider lists no pushed_authorization_request_endpoint: set it in the configuration, or pushed_authorization to auto")
            }
            return e
        case .auto:
            return endpoints.pushedAuthorization
        }
    }
}
