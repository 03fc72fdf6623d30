import SignInBase

/// An authorization server's metadata, typed: RFC 8414 2 (OAuth 2.0 Authorization Server Metadata) and the members
/// OpenID Connect Discovery 1.0 3 and later specifications add, as far as signin reads them. `Discovery` reads it once
/// and checks its issuer; it is passed on from there (a sign-in from an API's address asks the server once). A member
/// sent with another type than its specification's, or an empty string, is as absent.
package struct AuthorizationServerMetadata: Sendable, Equatable {
    /// Where it was read.
    package let url: String
    package var issuer: String
    package var authorizationEndpoint: String?
    package var tokenEndpoint: String?
    package var jwksURI: String?
    package var userinfoEndpoint: String?
    package var revocationEndpoint: String?
    /// RFC 8628 4.
    package var deviceAuthorizationEndpoint: String?
    /// RFC 7591 (dynamic client registration).
    package var registrationEndpoint: String?
    /// RFC 9126 5.
    package var pushedAuthorizationRequestEndpoint: String?
    package var requirePushedAuthorizationRequests: Bool?
    /// RFC 9207 3.
    package var authorizationResponseIssParameterSupported: Bool?
    package var scopesSupported: [String]?
    package var codeChallengeMethodsSupported: [String]?
    package var tokenEndpointAuthMethodsSupported: [String]?
    package var grantTypesSupported: [String]?
    /// RFC 9449 5.1.
    package var dpopSigningAlgValuesSupported: [String]?
    /// draft-ietf-oauth-client-id-metadata-document.
    package var clientIDMetadataDocumentSupported: Bool?
    /// draft-ietf-oauth-identity-assertion-authz-grant: `urn:ietf:params:oauth:grant-profile:id-jag` when the server
    /// takes identity assertions (MCP's enterprise-managed authorization).
    package var authorizationGrantProfilesSupported: [String]?
    /// Whether it lists the id-jag grant profile (MCP's enterprise-managed authorization): it takes ID-JAGs.
    package var takesIdentityAssertions: Bool {
        authorizationGrantProfilesSupported?.contains("urn:ietf:params:oauth:grant-profile:id-jag") == true
    }

    /// The members of `document`, read from `url`.
    package init(document d: [String: JSONValue], url: String) {
        self.url = url
        issuer = d["issuer"]?.string ?? ""
        for (name, member) in Self.texts { self[keyPath: member] = d[name]?.string.flatMap { $0.isEmpty ? nil : $0 } }
        for (name, member) in Self.flags { self[keyPath: member] = d[name]?.bool }
        for (name, member) in Self.lists { self[keyPath: member] = d[name]?.array.map { $0.compactMap(\.string) } }
    }

    // Each optional member once: its name in the document and the property that keeps it, for `init` to read and
    // `completed(by:)` to complete.
    private static let texts: [(String, any WritableKeyPath<Self, String?> & Sendable)] = [
        ("authorization_endpoint", \.authorizationEndpoint), ("token_endpoint", \.tokenEndpoint), ("jwks_uri", \.jwksURI),
        ("userinfo_endpoint", \.userinfoEndpoint), ("revocation_endpoint", \.revocationEndpoint),
        ("device_authorization_endpoint", \.deviceAuthorizationEndpoint), ("registration_endpoint", \.registrationEndpoint),
        ("pushed_authorization_request_endpoint", \.pushedAuthorizationRequestEndpoint),
    ]
    private static let flags: [(String, any WritableKeyPath<Self, Bool?> & Sendable)] = [
        ("require_pushed_authorization_requests", \.requirePushedAuthorizationRequests),
        ("authorization_response_iss_parameter_supported", \.authorizationResponseIssParameterSupported),
        ("client_id_metadata_document_supported", \.clientIDMetadataDocumentSupported),
    ]
    private static let lists: [(String, any WritableKeyPath<Self, [String]?> & Sendable)] = [
        ("scopes_supported", \.scopesSupported), ("code_challenge_methods_supported", \.codeChallengeMethodsSupported),
        ("token_endpoint_auth_methods_supported", \.tokenEndpointAuthMethodsSupported), ("grant_types_supported", \.grantTypesSupported),
        (DPoP.discoveryMember, \.dpopSigningAlgValuesSupported),
        ("authorization_grant_profiles_supported", \.authorizationGrantProfilesSupported),
    ]

    /// Whether this is RFC 8414's document (read at an `oauth-authorization-server` well-known URL), not OpenID's.
    package var isOAuthMetadata: Bool { url.contains("/.well-known/oauth-authorization-server") }

    /// Whether the server is an OpenID provider, as far as its metadata says: it lists `openid` among its scopes, or,
    /// listing none, publishes keys for ID tokens.
    package var isOpenIDProvider: Bool { scopesSupported?.contains("openid") ?? (jwksURI != nil) }

    /// This document with each member it lacks taken from `other` (the same issuer's OpenID document: RFC 8414 makes
    /// `jwks_uri` optional, which OpenID needs).
    package func completed(by other: AuthorizationServerMetadata) -> AuthorizationServerMetadata {
        var m = self
        for (_, member) in Self.texts { m[keyPath: member] = m[keyPath: member] ?? other[keyPath: member] }
        for (_, member) in Self.flags { m[keyPath: member] = m[keyPath: member] ?? other[keyPath: member] }
        for (_, member) in Self.lists { m[keyPath: member] = m[keyPath: member] ?? other[keyPath: member] }
        return m
    }
}
