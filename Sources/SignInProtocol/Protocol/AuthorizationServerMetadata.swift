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

    /// The members of `document`, read from `url`.
    package init(document d: [String: JSONValue], url: String) {
        func string(_ key: String) -> String? { d[key]?.string.flatMap { $0.isEmpty ? nil : $0 } }
        func strings(_ key: String) -> [String]? { d[key]?.array.map { $0.compactMap(\.string) } }
        func bool(_ key: String) -> Bool? { d[key]?.bool }
        self.url = url
        issuer = d["issuer"]?.string ?? ""
        authorizationEndpoint = string("authorization_endpoint")
        tokenEndpoint = string("token_endpoint")
        jwksURI = string("jwks_uri")
        userinfoEndpoint = string("userinfo_endpoint")
        revocationEndpoint = string("revocation_endpoint")
        deviceAuthorizationEndpoint = string("device_authorization_endpoint")
        registrationEndpoint = string("registration_endpoint")
        pushedAuthorizationRequestEndpoint = string("pushed_authorization_request_endpoint")
        requirePushedAuthorizationRequests = bool("require_pushed_authorization_requests")
        authorizationResponseIssParameterSupported = bool("authorization_response_iss_parameter_supported")
        scopesSupported = strings("scopes_supported")
        codeChallengeMethodsSupported = strings("code_challenge_methods_supported")
        tokenEndpointAuthMethodsSupported = strings("token_endpoint_auth_methods_supported")
        grantTypesSupported = strings("grant_types_supported")
        dpopSigningAlgValuesSupported = strings(DPoP.discoveryMember)
        clientIDMetadataDocumentSupported = bool("client_id_metadata_document_supported")
    }

    /// Whether this is RFC 8414's document (read at an `oauth-authorization-server` well-known URL), not OpenID's.
    package var isOAuthMetadata: Bool { url.contains("/.well-known/oauth-authorization-server") }

    /// Whether the server is an OpenID provider, as far as its metadata says: it lists `openid` among its scopes, or,
    /// listing none, publishes keys for ID tokens.
    package var isOpenIDProvider: Bool { scopesSupported?.contains("openid") ?? (jwksURI != nil) }

    /// This document with each member it lacks taken from `other` (the same issuer's OpenID document: RFC 8414 makes
    /// `jwks_uri` optional, which OpenID needs).
    package func completed(by other: AuthorizationServerMetadata) -> AuthorizationServerMetadata {
        var m = self
        m.authorizationEndpoint = m.authorizationEndpoint ?? other.authorizationEndpoint
        m.tokenEndpoint = m.tokenEndpoint ?? other.tokenEndpoint
        m.jwksURI = m.jwksURI ?? other.jwksURI
        m.userinfoEndpoint = m.userinfoEndpoint ?? other.userinfoEndpoint
        m.revocationEndpoint = m.revocationEndpoint ?? other.revocationEndpoint
        m.deviceAuthorizationEndpoint = m.deviceAuthorizationEndpoint ?? other.deviceAuthorizationEndpoint
        m.registrationEndpoint = m.registrationEndpoint ?? other.registrationEndpoint
        m.pushedAuthorizationRequestEndpoint = m.pushedAuthorizationRequestEndpoint ?? other.pushedAuthorizationRequestEndpoint
        m.requirePushedAuthorizationRequests = m.requirePushedAuthorizationRequests ?? other.requirePushedAuthorizationRequests
        m.authorizationResponseIssParameterSupported = m.authorizationResponseIssParameterSupported ?? other.authorizationResponseIssParameterSupported
        m.scopesSupported = m.scopesSupported ?? other.scopesSupported
        m.codeChallengeMethodsSupported = m.codeChallengeMethodsSupported ?? other.codeChallengeMethodsSupported
        m.tokenEndpointAuthMethodsSupported = m.tokenEndpointAuthMethodsSupported ?? other.tokenEndpointAuthMethodsSupported
        m.grantTypesSupported = m.grantTypesSupported ?? other.grantTypesSupported
        m.dpopSigningAlgValuesSupported = m.dpopSigningAlgValuesSupported ?? other.dpopSigningAlgValuesSupported
        m.clientIDMetadataDocumentSupported = m.clientIDMetadataDocumentSupported ?? other.clientIDMetadataDocumentSupported
        return m
    }
}
