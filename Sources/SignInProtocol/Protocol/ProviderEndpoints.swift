import SignInBase
import SignInTransport
import FoundationEssentials

/// The provider endpoints a sign-in uses, from OpenID discovery or the configuration. Stored with the
/// credentials, so a cached command never needs discovery. Every URL here passed the endpoint rules (absolute
/// https, or http to this machine only) before it was kept.
public struct ProviderEndpoints: Codable, Sendable, Equatable {
    /// The issuer these endpoints belong to: an identifier compared as text (OpenID Discovery 4.3), so a String.
    public internal(set) var issuer: String
    package var authorization: String
    package var token: String
    package var jwks: String
    package var revocation: String?
    package var userinfo: String?
    package var deviceAuthorization: String?
    /// The provider says every authorization response carries `iss` (RFC 9207
    /// `authorization_response_iss_parameter_supported`), so a response without it is refused.
    public internal(set) var issuerParameterSupported: Bool?
    /// How the token endpoint takes client credentials (`token_endpoint_auth_methods_supported`), when said.
    package var tokenEndpointAuthMethods: [String]? = nil
    /// The grant types the token endpoint takes (`grant_types_supported`), when discovery lists them: kept with an
    /// entry, so that a token exchange (RFC 8693) the provider does not offer is said before any request.
    package var grantTypesSupported: [String]? = nil
    /// The pushed authorization request endpoint (RFC 9126), and whether the provider accepts nothing else
    /// (`require_pushed_authorization_requests`). Only a sign-in uses them, after discovery: not kept with an entry.
    var pushedAuthorization: String? = nil
    var pushedAuthorizationRequired: Bool? = nil
    /// The JWS algorithms the provider takes in DPoP proofs (`dpop_signing_alg_values_supported`, RFC 9449 5.1),
    /// when discovery lists them. Only a sign-in uses them: an entry keeps its proof key instead.
    public internal(set) var dpopSigningAlgorithms: [String]? = nil
    /// The scopes the server lists (`scopes_supported`), when its metadata says. Only a sign-in uses them (`openid`,
    /// `email` and `profile` are asked only of a server that lists them, or has no list): not kept with an entry.
    package var scopesSupported: [String]? = nil

    /// Whether this server can issue an ID token signin can verify: it has a JWKS (`jwks_uri`).
    package var issuesIDTokens: Bool { !jwks.isEmpty }

    enum CodingKeys: String, CodingKey {
        case issuer, authorization, token, jwks, revocation, userinfo, deviceAuthorization, issuerParameterSupported, tokenEndpointAuthMethods, grantTypesSupported
    }

    /// Where the browser signs in (`authorization_endpoint`).
    public var authorizationEndpoint: URL { Self.url(authorization) }
    /// Code exchange, refresh and device polling (`token_endpoint`).
    public var tokenEndpoint: URL { Self.url(token) }
    /// The keys that sign ID tokens (`jwks_uri`).
    public var jwksURI: URL { Self.url(jwks) }
    /// Revocation (RFC 7009, `revocation_endpoint`), when the provider has it.
    public var revocationEndpoint: URL? { revocation.map(Self.url) }
    /// Profile fields the ID token lacks (`userinfo_endpoint`).
    public var userinfoEndpoint: URL? { userinfo.map(Self.url) }
    /// Device authorization (RFC 8628, `device_authorization_endpoint`), when the provider has it.
    public var deviceAuthorizationEndpoint: URL? { deviceAuthorization.map(Self.url) }
    /// Pushed authorization requests (RFC 9126, `pushed_authorization_request_endpoint`), when the provider has them.
    public var pushedAuthorizationRequestEndpoint: URL? { pushedAuthorization.map(Self.url) }

    /// Each value passed `EndpointURL.problem`, which parses it as a URL, before it was stored here.
    private static func url(_ text: String) -> URL { URL(string: text)! }

    package init(issuer: String, authorization: String, token: String, jwks: String, revocation: String? = nil, userinfo: String? = nil, deviceAuthorization: String? = nil, issuerParameterSupported: Bool? = nil, tokenEndpointAuthMethods: [String]? = nil, grantTypesSupported: [String]? = nil, pushedAuthorization: String? = nil, pushedAuthorizationRequired: Bool? = nil, dpopSigningAlgorithms: [String]? = nil) {
        self.issuer = issuer
        self.authorization = authorization
        self.token = token
        self.jwks = jwks
        self.revocation = revocation
        self.userinfo = userinfo
        self.deviceAuthorization = deviceAuthorization
        self.issuerParameterSupported = issuerParameterSupported
        self.tokenEndpointAuthMethods = tokenEndpointAuthMethods
        self.grantTypesSupported = grantTypesSupported
        self.pushedAuthorization = pushedAuthorization
        self.pushedAuthorizationRequired = pushedAuthorizationRequired
        self.dpopSigningAlgorithms = dpopSigningAlgorithms
    }
}

extension ProviderEndpoints {
    /// Endpoints given in code (a test's stored credentials, or a provider without discovery).
    public init(issuer: String, authorizationEndpoint: URL, tokenEndpoint: URL, jwksURI: URL, revocationEndpoint: URL? = nil,
                userinfoEndpoint: URL? = nil, deviceAuthorizationEndpoint: URL? = nil) {
        self.init(issuer: issuer, authorization: authorizationEndpoint.absoluteString, token: tokenEndpoint.absoluteString,
                  jwks: jwksURI.absoluteString, revocation: revocationEndpoint?.absoluteString, userinfo: userinfoEndpoint?.absoluteString,
                  deviceAuthorization: deviceAuthorizationEndpoint?.absoluteString, issuerParameterSupported: nil)
    }
}

extension ProviderEndpoints {
    /// Which of the provider's own endpoints `url` is (token, revocation, pushed authorization, device
    /// authorization, the authorization endpoint), compared normalized and without query or fragment as a DPoP proof's
    /// `htu` is (RFC 3986 6, RFC 9449 4.3); nil for any other URL. A DPoP proof for one of them would let whoever holds a copied refresh
    /// token use it, so signin never gives one out: it makes those requests itself.
    package func ownEndpointName(of url: String) -> String? {
        // Compared normalized (RFC 3986 6): `/./token`, `/x/../token`, `/%74oken` and `:443` are the token endpoint
        // to a provider that normalizes `htu`, so they are to this check.
        let bare = EndpointURL.normalized
        let asked = bare(url)
        let own: [(String, String?)] = [("token", token), ("revocation", revocation), ("pushed authorization", pushedAuthorization),
                                        ("device authorization", deviceAuthorization), ("authorization", authorization)]
        return own.first { $0.1.map(bare) == asked }?.0
    }
}

