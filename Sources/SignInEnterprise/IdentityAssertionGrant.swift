import SignInBase
import SignInTransport
import SignInProtocol
import SignInAPIAccess
import FoundationEssentials

/// The two requests of MCP's enterprise-managed authorization (draft-ietf-oauth-identity-assertion-authz-grant; RFC
/// 8693 then RFC 7523), for one MCP server:
///
/// 1. At the enterprise IdP's token endpoint, authenticated as the configured client: a token exchange of the
///    person's ID token (`subject_token_type` id_token) for an ID-JAG (`requested_token_type` id-jag), with
///    `audience` the server's authorization server's issuer and `resource` the MCP server. The answer must say it
///    issued an ID-JAG and the JWT's `typ` must be `oauth-id-jag+jwt`; anything else is refused, and never sent on.
/// 2. At that authorization server's token endpoint, authenticated with this client's registration there: the
///    jwt-bearer grant with the ID-JAG as `assertion`. The answer is an access token for that server alone (no refresh
///    token: a new exchange replaces it). The ID-JAG is used once and kept nowhere.
///
/// A refusal at either step is read from its `error`, not its status (servers answer 400 or 401 `invalid_grant`).
struct IdentityAssertionGrant {
    static let idJAGType = "urn:ietf:params:oauth:token-type:id-jag"
    static let idTokenType = "urn:ietf:params:oauth:token-type:id_token"
    static let jwtBearer = "urn:ietf:params:oauth:grant-type:jwt-bearer"
    /// How errors name the IdP's token endpoint (`EnterpriseFamily` tells its refusals from the server's by it).
    static let idpEndpointName = "the identity provider's token endpoint"

    let http: HTTPClient
    /// The enterprise IdP's token endpoint and the configured client there.
    let idpTokenEndpoint: String
    let idpClient: ClientAuthentication
    let idpMethod: String?

    /// Step 1: the ID-JAG for `audience` (an authorization server's issuer) and `resource` (an MCP server).
    func identityAssertion(idToken: String, audience: String, resource: String, scope: String?) throws(SignInError) -> String {
        var form = [("grant_type", "urn:ietf:params:oauth:grant-type:token-exchange"), ("requested_token_type", Self.idJAGType),
                    ("audience", audience), ("resource", resource), ("subject_token", idToken), ("subject_token_type", Self.idTokenType)]
        if let scope { form.append(("scope", scope)) }
        var headers: [String] = []
        idpClient.apply(idpMethod == "client_secret_post" ? .formBody : .basicHeader, form: &form, headers: &headers)
        let endpoint = "\(Self.idpEndpointName) (\(idpTokenEndpoint))"
        let r = try http.postForm(idpTokenEndpoint, endpoint: endpoint, form: form, headers: headers + ["Accept: application/json"])
        let o = try Self.answer(r, endpoint: endpoint, target: resource)
        guard o["issued_token_type"]?.string == Self.idJAGType else {
            throw .providerError(endpoint: endpoint, code: "invalid_response", detail: "the exchange did not issue an ID-JAG (issued_token_type is \(o["issued_token_type"]?.string?.withoutControlCharacters.prefix(80) ?? "missing"))")
        }
        guard let jag = o["access_token"]?.string, TokenResponse.isTokenText(jag), Self.header(of: jag)?["typ"]?.string?.lowercased() == "oauth-id-jag+jwt" else {
            throw .providerError(endpoint: endpoint, code: "invalid_response", detail: "the ID-JAG is not a JWT of type oauth-id-jag+jwt; nothing was sent on")
        }
        return jag
    }

    /// Step 2: the access token for the MCP server, bought with `assertion` at `tokenEndpoint` with `registration`.
    /// Registers this client at `endpoint` (RFC 7591), as a public client (`none`) where the server lists that method
    /// or none at all (fastmcp registers only public ones), else with the secret the server gives (`client_secret_post`,
    /// or `client_secret_basic` where only that is listed: the MCP SDK's). It asks the code grant, with a loopback
    /// redirect URI, and not the jwt-bearer grant: a server that takes ID-JAGs from the clients it registers adds that
    /// grant itself, and refuses a registration asking for it (fastmcp: "requires a pre-registered client").
    static func register(at endpoint: String, issuer: String, methods: [String]?, http: HTTPClient) throws(SignInError) -> EnterpriseAuthorizationSettings.Registration {
        var method = "none"
        if let methods, !methods.contains("none") {
            method = methods.contains("client_secret_basic") && !methods.contains("client_secret_post") ? "client_secret_basic" : "client_secret_post"
        }
        let fields: [String: JSONValueOut] = [
            "client_name": .string("signin"), "grant_types": .array([.string("authorization_code"), .string("refresh_token")]),
            "token_endpoint_auth_method": .string(method), "application_type": .string("native"),
            "redirect_uris": .array([.string("http://127.0.0.1/callback")]), "response_types": .array([.string("code")]),
        ]
        let (id, doc) = try ClientRegistration.post(fields, to: endpoint, named: "the registration endpoint of \(issuer.withoutControlCharacters) (\(endpoint))", http: http)
        let secret = doc["client_secret"]?.string.flatMap { $0.isEmpty ? nil : $0 }
        let given = doc["token_endpoint_auth_method"]?.string ?? method
        return .init(clientID: id, clientSecret: secret, tokenEndpointAuthMethod: secret == nil ? "none" : given == "client_secret_basic" ? "client_secret_basic" : "client_secret_post")
    }

    static func redeem(_ assertion: String, at tokenEndpoint: String, issuer: String, registration: EnterpriseAuthorizationSettings.Registration,
                       http: HTTPClient, now: Date) throws(SignInError) -> SignInToken {
        var form = [("grant_type", jwtBearer), ("assertion", assertion)]
        var headers = ["Accept: application/json"]
        let client = ClientAuthentication(clientID: registration.clientID, clientSecret: registration.clientSecret)
        client.apply(registration.tokenEndpointAuthMethod == "client_secret_post" ? .formBody : .basicHeader, form: &form, headers: &headers)
        let endpoint = "the token endpoint of \(issuer.withoutControlCharacters) (\(tokenEndpoint))"
        let r = try http.postForm(tokenEndpoint, endpoint: endpoint, form: form, headers: headers)
        let o = try answer(r, endpoint: endpoint, target: nil)
        guard let token = o["access_token"]?.string, TokenResponse.isTokenText(token), !token.isEmpty else {
            throw .providerError(endpoint: endpoint, code: "invalid_response", detail: "no access_token")
        }
        guard o["token_type"]?.string?.lowercased() == "bearer" else { throw .providerError(endpoint: endpoint, code: "invalid_response", detail: "token_type is not Bearer") }
        let lifetime = o["expires_in"]?.int.map { min(max($0, 0), 86_400) } ?? 300
        return SignInToken(value: token, expirationDate: now.addingTimeInterval(TimeInterval(lifetime)))
    }

    /// The answer's object; an error answer (whatever its status) as the provider's error, `invalid_target` for
    /// `target` as `.targetRefused`.
    static func answer(_ r: HTTPResponse, endpoint: String, target: String?) throws(SignInError) -> [String: JSONValue] {
        let o = JSONValue.object(from: r.body)
        if let code = o?["error"]?.string, !code.isEmpty {
            let error = OAuthError.make(code: code, description: o?["error_description"]?.string, endpoint: endpoint)
            if code == "invalid_target" || code == "access_denied", let target {
                throw .targetRefused(endpoint: endpoint, target: target, detail: o?["error_description"]?.string?.withoutControlCharacters ?? code)
            }
            throw error
        }
        guard r.status == 200, let o else { throw OAuthError.from(r, endpoint: endpoint) }
        return o
    }

    /// A JWT's header, unverified (only its `typ` is read, to refuse what is not an ID-JAG before sending it on).
    static func header(of jwt: String) -> [String: JSONValue]? {
        guard let first = jwt.split(separator: ".", omittingEmptySubsequences: false).first, let bytes = Base64URL.decode(String(first)) else { return nil }
        return JSONValue.object(from: Data(bytes))
    }
}
