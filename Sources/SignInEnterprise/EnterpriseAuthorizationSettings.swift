import SignInBase
import SignInProtocol

/// MCP's enterprise-managed authorization (the `io.modelcontextprotocol/enterprise-managed-authorization`
/// extension; "Cross App Access"): the configuration's `enterprise_authorization` section. The configured provider is
/// the company's identity provider; for each MCP server's authorization server that takes identity assertions, this
/// client's registration there, which an administrator writes:
///
/// ```json
/// "enterprise_authorization": {"authorization_servers": {
///     "https://auth.mcp.example.com": {"client_id": "...", "client_secret": "...", "token_endpoint_auth_method": "client_secret_basic"}}}
/// ```
///
/// Each issuer is spelled as the server's RFC 8414 document spells it; `client_secret` is optional (a public client:
/// `token_endpoint_auth_method` `none`); the method defaults to `client_secret_basic` with a secret, `none` without.
public struct EnterpriseAuthorizationSettings: ConfigurationSection {
    public static let keys = ["enterprise_authorization"]

    /// This client's registration at one authorization server.
    public struct Registration: Sendable, Equatable {
        public var clientID: String
        public var clientSecret: String?
        /// `none`, `client_secret_post` or `client_secret_basic`.
        public var tokenEndpointAuthMethod: String

        public init(clientID: String, clientSecret: String?, tokenEndpointAuthMethod: String? = nil) {
            self.clientID = clientID
            self.clientSecret = clientSecret
            self.tokenEndpointAuthMethod = tokenEndpointAuthMethod ?? (clientSecret == nil ? "none" : "client_secret_basic")
        }
    }

    /// The registrations, by the authorization server's issuer.
    public var authorizationServers: [String: Registration] = [:]
    /// Whether the configuration has the section at all: the person's IdP sign-in then buys tokens for every MCP server
    /// whose authorization server takes ID-JAGs, where it holds a registration or lists the id-jag grant profile
    /// (`authorization_grant_profiles_supported`: signin registers itself there).
    public var isEnabled = false

    public init() {}

    public init(from fields: ConfigurationFields) throws(SignInError) {
        guard let section = fields["enterprise_authorization"] else { return }
        let name = "enterprise_authorization"
        guard let o = section.object else { throw fields.fail(name, "must be an object with \"authorization_servers\"") }
        if let unknown = o.keys.sorted().first(where: { $0 != "authorization_servers" }) {
            throw fields.fail("\(name).\(unknown)", "is not a key of this section (it has \"authorization_servers\")")
        }
        isEnabled = true
        // No registrations at all: every server whose authorization server lists the id-jag profile is registered at.
        guard let given = o["authorization_servers"], given != .null else { return }
        guard let servers = given.object else {
            throw fields.fail("\(name).authorization_servers", "must be an object naming authorization servers' issuers")
        }
        for (issuer, value) in servers {
            let field = "\(name).authorization_servers.\(issuer)"
            if let problem = EndpointURL.problem(issuer) { throw fields.fail(field, "the issuer: \(problem)") }
            guard let r = value.object else { throw fields.fail(field, "must be an object with \"client_id\"") }
            if let unknown = r.keys.sorted().first(where: { !["client_id", "client_secret", "token_endpoint_auth_method"].contains($0) }) {
                throw fields.fail("\(field).\(unknown)", "is not a key of a registration (client_id, client_secret, token_endpoint_auth_method)")
            }
            guard let id = r["client_id"]?.string, !id.isEmpty else { throw fields.fail("\(field).client_id", "missing: the client ID this client has at that server") }
            var secret: String?
            if let v = r["client_secret"], v != .null {
                guard let s = v.string, !s.isEmpty else { throw fields.fail("\(field).client_secret", "must be a non-empty string") }
                secret = s
            }
            var method: String?
            if let v = r["token_endpoint_auth_method"], v != .null {
                guard let m = v.string, ["none", "client_secret_post", "client_secret_basic"].contains(m) else {
                    throw fields.fail("\(field).token_endpoint_auth_method", "must be none, client_secret_post or client_secret_basic")
                }
                if m == "none" && secret != nil { throw fields.fail("\(field).token_endpoint_auth_method", "is none, but a client_secret is given") }
                if m != "none" && secret == nil { throw fields.fail("\(field).client_secret", "missing: \(m) needs the client's secret") }
                method = m
            }
            authorizationServers[issuer] = Registration(clientID: id, clientSecret: secret, tokenEndpointAuthMethod: method)
        }
    }

    /// The registration at `issuer` (compared as issuers are), if the section holds one.
    public func registration(at issuer: String) -> Registration? {
        authorizationServers.first { Issuer.same($0.key, issuer) }?.value
    }
}

extension SignInConfiguration {
    /// The `enterprise_authorization` section (empty when the file has none).
    public var enterpriseAuthorization: EnterpriseAuthorizationSettings {
        get { sections[EnterpriseAuthorizationSettings.self] }
        set { sections[EnterpriseAuthorizationSettings.self] = newValue }
    }
}
