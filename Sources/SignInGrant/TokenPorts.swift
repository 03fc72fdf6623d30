import SignInBase
import SignInTransport
import SignInProtocol
import SignInStorage
import FoundationEssentials

/// The provider's token endpoint and keys as the token use case (`TokenUseCase`) needs them: the one door to the
/// network on the token path. `ProviderTokenEndpoint` is the real one (libcurl); a test gives a fake that answers
/// as it is told.
package protocol TokenEndpoint: Sendable {
    /// Called once before a refresh reserves anything for its save: the static build hands the run over to its
    /// dynamic half here, before any room on disk is taken.
    func prepare() throws(SignInError)

    /// A refresh (RFC 6749 6) at `endpoints` with `refreshToken`, for `resource` alone when one is named (RFC 8707).
    /// An answer that is refused but carries a rotated refresh token hands it to `keepRotated` before throwing.
    func refresh(_ refreshToken: String, endpoints: ProviderEndpoints, proofKey: ProofKey?, resource: String?,
                 keepRotated: (String) throws(SignInError) -> Void) throws(SignInError) -> TokenResponse

    /// A token exchange (RFC 8693) of the person's access token `subjectToken` for `audience` and `resource`.
    func exchange(_ subjectToken: String, endpoints: ProviderEndpoints, proofKey: ProofKey?, audience: String?,
                  resource: String?) throws(SignInError) -> TokenResponse

    /// A refreshed ID token, verified against the provider's keys (the signature, issuer, audience, lifetime).
    func verifyIDToken(_ raw: String, endpoints: ProviderEndpoints) throws(SignInError) -> VerifiedIDToken
}

/// What the token use case takes of a verified ID token.
package struct VerifiedIDToken: Sendable {
    package var subject: String
    package var profile: SignInProfile
    package var expiry: Date?

    package init(subject: String, profile: SignInProfile, expiry: Date?) {
        self.subject = subject
        self.profile = profile
        self.expiry = expiry
    }
}

/// The time the token use case decides freshness by: `WallClock` in a program, a fixed one in a test.
package protocol TokenClock: Sendable {
    var now: Date { get }
}

/// The system's clock.
package struct WallClock: TokenClock {
    package init() {}
    package var now: Date { Date() }
}

/// The real token endpoint: the configuration's client at the provider, over libcurl.
package struct ProviderTokenEndpoint: TokenEndpoint {
    package let configuration: SignInConfiguration

    package init(configuration: SignInConfiguration) {
        self.configuration = configuration
    }

    package func prepare() throws(SignInError) {
        try HTTPClient.loadLibrary()
    }

    package func refresh(_ refreshToken: String, endpoints: ProviderEndpoints, proofKey: ProofKey?, resource: String?,
                         keepRotated: (String) throws(SignInError) -> Void) throws(SignInError) -> TokenResponse {
        var tokens = TokenClient(config: configuration, endpoints: endpoints)
        tokens.proofKey = proofKey
        return try tokens.refresh(refreshToken, resource: resource, keepRotated: keepRotated)
    }

    package func exchange(_ subjectToken: String, endpoints: ProviderEndpoints, proofKey: ProofKey?, audience: String?,
                          resource: String?) throws(SignInError) -> TokenResponse {
        var tokens = TokenClient(config: configuration, endpoints: endpoints)
        tokens.proofKey = proofKey
        return try tokens.exchange(subjectToken: subjectToken, subjectTokenType: TokenExchange.accessTokenType, audience: audience,
                                   resource: resource, requestedTokenType: TokenExchange.accessTokenType)
    }

    package func verifyIDToken(_ raw: String, endpoints: ProviderEndpoints) throws(SignInError) -> VerifiedIDToken {
        let verified = try verify(raw, endpoints: endpoints, nonce: nil)
        return VerifiedIDToken(subject: verified.subject, profile: verified.profile, expiry: verified.expiry)
    }

    /// An ID token verified with the keys at `endpoints.jwks` (`prefetched` when a sign-in fetched them already;
    /// fetched again once when the token names a key they lack), for this client, `nonce` when one was sent.
    package func verify(_ raw: String, endpoints: ProviderEndpoints, nonce: String?, prefetched: JWKS? = nil) throws(SignInError) -> IDToken {
        let http = HTTPClient(configuration: configuration)
        let jwks: JWKS
        if let prefetched { jwks = prefetched } else { jwks = try JWKS.fetch(endpoints.jwks, http: http) }
        var expect = IDToken.Expectations(issuer: configuration.issuer, clientID: configuration.clientID, nonce: nonce)
        expect.issuerRules = configuration.providerRules
        expect.sections = configuration.givenSections
        return try IDToken.verify(raw, jwks: jwks, refetch: { () throws(SignInError) -> JWKS in try JWKS.fetch(endpoints.jwks, http: http) }, expect: expect)
    }
}
