/// One authorization request (RFC 6749 4.1 with PKCE): the URL to open, and the secrets to check the answer with.
struct AuthorizationRequest: Sendable, CustomStringConvertible {
    let state: String
    let nonce: String
    let pkce: PKCE
    let redirectURI: String
    let url: String
    let scopes: [String]

    /// Never the state, nonce or verifier.
    var description: String { "AuthorizationRequest(redirect \(redirectURI), scopes \(scopes.joined(separator: " ")))" }

    init(config: SignInConfiguration, endpoints: ProviderEndpoints, redirectURI: String, scopes: [String], loginHint: String?) throws(SignInError) {
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
        if let hd = config.hostedDomain { params.append(("hd", hd)) }
        for (k, v) in config.extraAuthorizationParameters.sorted(by: { $0.key < $1.key }) { params.append((k, v)) }
        // OpenID Core 11: a request for offline_access must carry prompt=consent (certified providers refuse it
        // otherwise); unless the configuration chose a prompt itself.
        if scopes.contains("offline_access") && !params.contains(where: { $0.0 == "prompt" }) { params.append(("prompt", "consent")) }
        let base = endpoints.authorization
        url = base + (base.contains("?") ? "&" : "?") + FormEncoding.encode(params)
    }
}
