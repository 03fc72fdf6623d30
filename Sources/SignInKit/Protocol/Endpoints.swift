/// The provider endpoints a sign-in uses, from OpenID discovery or the configuration. Stored with the
/// credentials, so a cached command never needs discovery.
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
    /// The provider says every authorization response carries `iss` (RFC 9207
    /// `authorization_response_iss_parameter_supported`), so a response without it is refused.
    public var issuerParameterSupported: Bool?
}
