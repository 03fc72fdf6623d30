import SignInBase
import SignInProtocol
import SignInStorage
import SignInGrant
import SignInTransport
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// The interactive sign-in: discovery, the grant (`AuthorizationGrant`), verification, saving.
extension SignInClient {
    // MARK: Interactive sign-in

    /// Signs in through the browser (or the device flow), verifies the ID token and stores the credentials.
    /// Cancel the surrounding task to stop at once, wherever it waits (the browser, discovery, the code
    /// exchange): it throws `.canceled`, the listener is closed and its port freed.
    public func signIn(hint: String? = nil, additionalScopes: [String] = [], options: SignInOptions = SignInOptions()) async throws(SignInError) -> SignInUser {
        try await signIn(hint: hint, additionalScopes: additionalScopes, options: options) { _ in }
    }

    /// `signIn` whose events also go to `alsoTo` (besides the client's `onEvent`): one sign-in's own observer.
    func signIn(hint: String?, additionalScopes: [String], options: SignInOptions,
                alsoTo extra: @escaping @Sendable (SignInEvent) -> Void) async throws(SignInError) -> SignInUser {
        var opts = options
        if let hint { opts.loginHint = hint }
        let o = opts
        let emit: @Sendable (SignInEvent) -> Void = { event in
            self.onEvent(event)
            extra(event)
        }
        return try await offPool("the sign-in") { (canceller) throws(SignInError) -> SignInUser in
            try self.signInBlocking(additionalScopes: additionalScopes, options: o, canceller: canceller, emit: emit)
        }
    }

    func scopes(adding extra: [String]) -> [String] {
        var s = configuration.scopes
        for x in extra where !s.contains(x) { s.append(x) }
        return s
    }

    /// An interactive sign-in, decided in this order:
    ///
    /// 1. The store must be readable: one that cannot be read safely is never overwritten, so this fails before
    ///    any browser opens (`signOut()` removes it on purpose). Other accounts stay as they are. Its key must be
    ///    where the configuration says (created now if there is none, a new passphrase asked for now).
    /// 2. Discovery, or the configured endpoints, gives the provider's endpoints. The provider's signing keys are
    ///    fetched meanwhile, while the person is in the browser.
    /// 3. The grant: the device authorization grant (RFC 8628) when `options.useDeviceFlow`, else the
    ///    authorization code grant with PKCE through the browser and the loopback listener (`LoopbackAuthorization`).
    ///    Both end in a token response.
    /// 4. `complete`: the ID token must verify and, for incremental consent, name the required account; then the
    ///    account is added (or updated) and made current. The browser, when it brought the code, is shown how it ended.
    func signInBlocking(additionalScopes: [String], options: SignInOptions, canceller: Canceller,
                        emit: @escaping @Sendable (SignInEvent) -> Void) throws(SignInError) -> SignInUser {
        _ = try allCredentials()
        // The key where the configuration says it goes, before anyone signs in for nothing.
        try credentialStore?.prepareKey()
        let http = HTTPClient(configuration: configuration)
        let endpoints: ProviderEndpoints
        if let known = knownEndpoints {
            endpoints = known
        } else {
            endpoints = try Discovery.endpoints(for: configuration, http: http)
            DiscoveryCache.shared.store(endpoints, for: configuration)
        }
        var tokens = TokenClient(config: configuration, endpoints: endpoints)
        tokens.proofKey = try newProofKey(endpoints)
        let scopes = Self.scopes(scopes(adding: additionalScopes), for: endpoints, configured: configuration.scopes)
        let jwks = Prefetch { () throws(SignInError) -> JWKS? in
            guard endpoints.issuesIDTokens, scopes.contains("openid") else { return nil }
            return try JWKS.fetch(endpoints.jwks, http: http)
        }
        // Never return while it still runs: a program that exits then would tear down OpenSSL under it.
        defer { _ = jwks.value }
        let done = { (response: TokenResponse, nonce: String?) throws(SignInError) -> SignInUser in
            try self.complete(response, endpoints: endpoints, tokens: tokens, nonce: nonce, requestedScopes: scopes,
                              requireUserID: options.requireUserID, requiredName: options.requiredAccountName, jwks: jwks.value ?? nil)
        }
        func run<G: AuthorizationGrant>(_ grant: G) throws(SignInError) -> SignInUser {
            do throws(SignInError) {
                let answer = try grant.awaitAnswer(canceller: canceller, emit: emit)
                let user = try CriticalSection.run { () throws(SignInError) -> SignInUser in
                    let (response, nonce) = try grant.exchange(answer)
                    return try done(response, nonce)
                }
                grant.finish(.success(account: user.profile.displayName, provider: issuer, returnTo: options.returnTo))
                return user
            } catch {
                grant.finish(.failure(error.description, provider: issuer, returnTo: options.returnTo))
                throw error
            }
        }
        if options.useDeviceFlow {
            return try run(DeviceGrant(device: DeviceAuthorization(tokens: tokens, scopes: scopes), timeoutSeconds: options.timeoutSeconds))
        }
        return try run(try LoopbackAuthorization(configuration: configuration, endpoints: endpoints, scopes: scopes, options: options,
                                                 environment: environment, tokens: tokens))
    }

    /// A new DPoP key for this sign-in's grant when the configuration asks for one (`dpop`: `always`, or `auto` and
    /// the provider lists ES256), else nil. Made inside the TPM when the store's key is sealed to one (it never
    /// leaves it), else by OpenSSL (kept in the entry under the store key).
    func newProofKey(_ endpoints: ProviderEndpoints) throws(SignInError) -> ProofKey? {
        let offered = endpoints.dpopSigningAlgorithms?.contains(DPoP.algorithm) == true
        switch configuration.proofOfPossession {
        case .never: return nil
        case .auto: guard offered else { return nil }
        case .always:
            guard offered else {
                throw .unsupported(reason: "\(configuration.sourcePath) sets \"dpop\": \"always\", but the provider \(issuer) does not list \(DPoP.algorithm) in \(DPoP.discoveryMember) (set \"dpop\" to \"auto\" to sign in with bearer tokens there)")
            }
        }
        if let store = credentialStore, (try store.key.currentLocation()).storage?.isTPM == true, let device = store.key.custody.tpmDevice {
            return try ProofKey.generateInTPM(device: device)
        }
        return try ProofKey.generate()
    }

    /// The scopes to ask `endpoints`' server for: `asked` as configured of an OpenID provider; of a plain OAuth 2.0
    /// server (no JWKS: it cannot issue an ID token signin could verify) not `openid`, and, when the configuration
    /// left the scopes at OpenID's default, none of the three (the server's own default scopes then apply). A server
    /// found from an API gets only what its metadata offers (`APIAccess` chose them).
    static func scopes(_ asked: [String], for endpoints: ProviderEndpoints, configured: [String]) -> [String] {
        guard !endpoints.issuesIDTokens else { return asked }
        let openIDScopes = ["openid", "email", "profile"]
        if configured == openIDScopes { return asked.filter { !openIDScopes.contains($0) } }
        return asked.filter { $0 != "openid" }
    }

    /// Who signed in at a server that gave no ID token (a plain OAuth 2.0 server, an MCP server's): the profile its
    /// userinfo endpoint (or a configured one, such as a GitHub-style `/user`) answers, else none: the account is then
    /// named by the API (the grant's one) or the server, and `identitySource` says `none`.
    func profileWithoutIDToken(_ response: TokenResponse, endpoints: ProviderEndpoints, tokens: TokenClient) -> (SignInProfile, source: String) {
        if endpoints.userinfo != nil, let claims = try? tokens.userinfo(accessToken: response.accessToken, tokenType: response.tokenType),
           let profile = SignInProfile(profileEndpoint: claims) {
            return (profile, "userinfo")
        }
        return (SignInProfile(userID: configuration.grantAPI ?? issuer), "none")
    }

    /// Verifies the ID token of a fresh sign-in and saves the credentials under the lock.
    func complete(_ response: TokenResponse, endpoints: ProviderEndpoints, tokens: TokenClient, nonce: String?, requestedScopes: [String],
                          requireUserID: String?, requiredName: String? = nil, jwks: JWKS?) throws(SignInError) -> SignInUser {
        // An ID token is required where one was asked of a server that issues them; elsewhere (a plain OAuth 2.0
        // server) the identity comes from a profile endpoint, or there is none.
        let expectsIDToken = requestedScopes.contains("openid") && endpoints.issuesIDTokens
        var profile: SignInProfile
        var idToken: (raw: String, expiry: Date?)?
        var identitySource: String?
        if let raw = response.idToken, endpoints.issuesIDTokens {
            let verified = try verifyIDToken(raw, endpoints: endpoints, nonce: nonce, prefetched: jwks)
            profile = verified.profile
            idToken = (raw, verified.expiry)
            if profile.isMissingBasics, let info = try? tokens.userinfo(accessToken: response.accessToken, tokenType: response.tokenType) {
                profile.fillMissing(from: SignInProfile(claims: info))
            }
        } else if expectsIDToken {
            throw .providerError(endpoint: tokens.tokenEndpointName, code: "invalid_response", detail: "no id_token (is \"openid\" among the scopes?)")
        } else {
            (profile, identitySource) = profileWithoutIDToken(response, endpoints: endpoints, tokens: tokens)
        }
        if let required = requireUserID, profile.userID != required {
            throw .mismatchWithCurrentUser(expected: requiredName ?? required, actual: profile.displayName)
        }
        let subject = profile.userID
        let creds = try storage.withExclusiveAccess(for: identity, subject: subject) { () throws(SignInError) -> StoredCredentials in
            let previous = try storage.credentials(for: identity, subject: subject)
            var creds = StoredCredentials(
                issuer: issuer, clientID: identity.clientID,
                // Google omits the refresh token when one was already issued: keep the old one of this account.
                refreshToken: response.refreshToken ?? (previous?.grantEndedAt == nil ? previous?.refreshToken : nil),
                accessToken: response.accessToken,
                accessTokenExpiry: response.expiresIn.map { Date(timeIntervalSinceNow: TimeInterval($0)) },
                idToken: idToken?.raw, idTokenExpiry: idToken?.expiry, profile: profile,
                grantedScopes: response.scope ?? requestedScopes, endpoints: endpoints, savedAt: Date(), grantEndedAt: nil)
            creds.dpopKey = tokens.proofKey?.stored
            creds.accessTokenType = response.tokenType == "DPoP" ? "DPoP" : nil
            creds.identitySource = identitySource
            // A grant for one API: its own access token is that API's, so a token for the API needs no refresh now.
            if let api = configuration.grantAPI, let expiry = creds.accessTokenExpiry {
                creds.keep(.resource(api), value: response.accessToken, expiry: expiry)
            }
            try storage.save(creds)
            return creds
        }
        try storage.withExclusiveAccess(for: identity, subject: nil) { () throws(SignInError) in
            try storage.makeCurrent(subject: subject, for: identity)
        }
        // An API's new client and scopes (a step-up that registered again): kept now that its grant is saved.
        if let pending = configuration.recordsAfterSignIn, let store = credentialStore {
            for record in pending.records { try store.save(record) }
            // The client it replaces holds a grant no record leads to any more.
            if let old = pending.replacing, old != identity {
                for account in (try? store.allCredentials(for: old)) ?? [] {
                    _ = try? store.withExclusiveAccess(for: old, subject: nil) { () throws(SignInError) in
                        _ = try store.removeCredentials(for: old, subject: account.profile.userID)
                    }
                }
            }
        }
        currentUserChanged()
        return SignInUser(creds, client: self, isCurrent: true)
    }

    func verifyIDToken(_ raw: String, endpoints: ProviderEndpoints, nonce: String?, prefetched: JWKS? = nil) throws(SignInError) -> IDToken {
        try ProviderTokenEndpoint(configuration: configuration).verify(raw, endpoints: endpoints, nonce: nonce, prefetched: prefetched)
    }
}
