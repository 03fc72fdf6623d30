import FoundationEssentials

/// The provider endpoints a sign-in uses, from OpenID discovery or the configuration.
public struct Endpoints: Codable, Sendable, Equatable {
    /// The issuer these endpoints belong to.
    public var issuer: String
    /// Where the browser signs in.
    public var authorization: String
    /// Code exchange, refresh and device polling.
    public var token: String
    /// The keys that sign ID tokens.
    public var jwks: String
    /// Revocation (RFC 7009), when the provider has it.
    public var revocation: String?
    /// Profile fields the ID token lacks.
    public var userinfo: String?
    /// Device authorization (RFC 8628), when the provider has it.
    public var deviceAuthorization: String?
}

/// OpenID Connect Discovery 1.0: `<issuer>/.well-known/openid-configuration`.
enum Discovery {
    static func endpoints(for config: Configuration, http: HTTPClient) throws(SignInError) -> Endpoints {
        let o = config.endpoints
        var doc: [String: JSONValue] = [:]
        if o.authorization == nil || o.token == nil || o.jwks == nil {
            let base = config.issuer.hasSuffix("/") ? String(config.issuer.dropLast()) : config.issuer
            let url = base + "/.well-known/openid-configuration"
            let endpoint = "discovery document (\(url))"
            let r = try http.get(url, endpoint: endpoint)
            guard r.status == 200 else {
                throw .providerError(endpoint: endpoint, code: "http_\(r.status)", detail: "expected 200")
            }
            guard let d = JSONValue.object(from: r.body) else {
                throw .providerError(endpoint: endpoint, code: "invalid_response", detail: "not a JSON object")
            }
            // A document for another issuer is how a mix-up attack starts (RFC 9207 / OpenID Discovery 4.3).
            guard let iss = d["issuer"]?.string, iss == config.issuer || (config.isGoogle && iss == Configuration.googleIssuer) else {
                throw .providerError(endpoint: endpoint, code: "issuer_mismatch",
                                     detail: "the document names issuer \"\(d["issuer"]?.string ?? "(none)")\", expected \"\(config.issuer)\"")
            }
            doc = d
        }
        func pick(_ override: String?, _ key: String, required: Bool) throws(SignInError) -> String? {
            if let override { return override }
            guard let v = doc[key]?.string, !v.isEmpty else {
                if required { throw .providerError(endpoint: "discovery document", code: "missing_\(key)", detail: "set \"\(key)\" in the configuration") }
                return nil
            }
            try HTTPClient.checkTransport(v, endpoint: key)
            return v
        }
        return Endpoints(
            issuer: config.issuer,
            authorization: try pick(o.authorization, "authorization_endpoint", required: true)!,
            token: try pick(o.token, "token_endpoint", required: true)!,
            jwks: try pick(o.jwks, "jwks_uri", required: true)!,
            revocation: try pick(o.revocation, "revocation_endpoint", required: false),
            userinfo: try pick(o.userinfo, "userinfo_endpoint", required: false),
            deviceAuthorization: try pick(o.deviceAuthorization, "device_authorization_endpoint", required: false)
                ?? (config.isGoogle ? "https://oauth2.googleapis.com/device/code" : nil))
    }
}
