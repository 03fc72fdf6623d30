import SignInBase
import SignInProtocol
import SignInStorage
import SignInTransport
import FoundationEssentials

/// What a consumer asks of signin's one token path (`SignInClient.token(_:)`): `signin token` and `id-token`,
/// every bridge, the metadata server and the agent (whose protocol carries this value across the socket) all
/// build one and get the same answer for it.
public struct TokenRequest: Sendable, Equatable {
    /// The access token (for APIs) or the ID token.
    public var kind: TokenKind
    /// Empty: the signed-in person's own token. Otherwise a service account's, minted with the person's grant
    /// (the last e-mail is the service account, any before it delegates), as gcloud's
    /// `--impersonate-service-account`.
    public var serviceAccountChain: [String]
    /// For an ID token, whom it is for. nil means this client, the only audience a person's ID token has;
    /// another audience needs a service account. For the person's access token: the audience to exchange it for
    /// (RFC 8693 token exchange at the provider's token endpoint), kept per audience until it expires.
    public var audience: String?
    /// For the person's access token: the API (an RFC 8707 resource indicator, one of the configuration's
    /// `resources`) the token is for alone, got with a refresh that names it and kept per resource. With `audience`,
    /// sent along with the exchange.
    public var resource: String? = nil
    /// For a service account's access token: its scopes (nil: cloud-platform).
    public var scopes: [String]?
    /// For a service account's ID token: whether it carries the `email` claim.
    public var includeEmail: Bool
    /// The token must stay valid this much longer; a refresh happens first otherwise.
    public var minimumValidity: Duration
    /// Refresh even when the stored token is fresh enough.
    public var forceRefresh: Bool
    /// The account (an e-mail or `sub`); nil for the current one.
    public var account: String?
    /// Google Cloud through workload or workforce identity federation: an access token (or, with a chain, a
    /// service account's token) is bought at Google's STS with the person's ID token instead of being the
    /// provider's own access token. nil: the provider's tokens (and Google's, when the provider is Google).
    public var workloadIdentity: WorkloadIdentityFederation? = nil
    /// For a DPoP-bound access token (RFC 9449): the request to make a proof for, answered in
    /// `IssuedToken.dpopProof` with the token it names. Crosses the agent like the rest, so a forwarded session
    /// gets proofs without the key. Ignored for bearer tokens.
    public var proofFor: DPoPTarget? = nil
    /// With no `serviceAccountChain`: whether the configuration's `impersonate_service_account` chain applies (the
    /// person's own token only when it names none), as the `signin` command's token commands do. The one token path
    /// then decides the principal wherever the request comes from, a forwarded session's agent included; false
    /// (the default): an empty chain is the person.
    public var appliesConfiguredChain: Bool = false

    /// One request a DPoP proof is for: its HTTP method and URL.
    public struct DPoPTarget: Sendable, Equatable {
        /// The HTTP method, in capitals (`GET`, `POST`).
        public var method: String
        /// The URL (its query and fragment are left out of the proof).
        public var url: String

        public init(method: String, url: String) {
            self.method = method.uppercased()
            self.url = url
        }

        /// Why the target cannot be in a proof (a method of letters, an http(s) URL of visible ASCII), or nil.
        public var problem: String? {
            guard !method.isEmpty, method.utf8.count <= 16, method.utf8.allSatisfy({ (0x41...0x5A).contains($0) }) else { return "the method must be an HTTP method such as GET or POST" }
            guard url.hasPrefix("https://") || url.hasPrefix("http://"), url.utf8.count <= 4096, TokenResponse.isTokenText(url) else { return "the URL must be an http(s) URL" }
            return nil
        }
    }

    public init(kind: TokenKind = .access, serviceAccountChain: [String] = [], audience: String? = nil, scopes: [String]? = nil,
                includeEmail: Bool = true, minimumValidity: Duration = .seconds(60), forceRefresh: Bool = false, account: String? = nil) {
        self.kind = kind
        self.serviceAccountChain = serviceAccountChain
        self.audience = audience
        self.scopes = scopes
        self.includeEmail = includeEmail
        self.minimumValidity = minimumValidity
        self.forceRefresh = forceRefresh
        self.account = account
    }

    /// The most `minimumValidity` may ask (a day), as `signin token --min-ttl` takes it.
    public static let maximumValidity = 86_400
}

/// A token answered by `SignInClient.token(_:)`, and whom it is for.
public struct IssuedToken: Sendable, Equatable {
    public let token: SignInToken
    public let kind: TokenKind
    /// The person's `sub`, or the service account's e-mail.
    public let subject: String
    /// The person's e-mail (their `sub` when the provider gave none), or the service account's e-mail.
    public let name: String
    /// `DPoP` when `token` is the person's access token bound to this machine's key (RFC 9449), else `Bearer`.
    public internal(set) var tokenType: String = "Bearer"
    /// The key a `DPoP` token is bound to, as the entry keeps it; never leaves SignInKit.
    var storedProofKey: String?
    /// The proof `TokenRequest.proofFor` asked for, naming this token; nil for a bearer token.
    public internal(set) var dpopProof: String?
    /// The API this access token is for alone (`TokenRequest.resource`), or nil: the grant's own token.
    public internal(set) var resource: String?
    /// The audience this access token was exchanged for (`TokenRequest.audience` of an access token), or nil.
    public internal(set) var audience: String?

    /// The token for a consumer whose protocol can carry only a bearer token (`consumer` names it: "kubectl",
    /// "git", "docker", "the metadata server"): the value, or, for an access token bound to this machine's DPoP key,
    /// `.unsupported` saying so. A bound token handed out as a bearer one is refused by every API that checks the
    /// binding, and useless to one that does not; where the protocol can say DPoP (`signin token --json`'s
    /// `token_type`, `exec`'s `SIGNIN_TOKEN_TYPE`), it is said instead.
    public func bearerValue(for consumer: String) throws(SignInError) -> String {
        guard tokenType == "DPoP" else { return token.value }
        throw .unsupported(reason: "\(consumer) can carry only a bearer token, and this access token is bound to signin's DPoP key (RFC 9449: each request needs a proof). Use `signin exec` (SIGNIN_TOKEN_TYPE says DPoP) with `signin dpop-proof`, or set \"dpop\": \"never\" in the configuration and sign in again for bearer tokens")
    }

    /// A DPoP proof for one request with `method` to `url` presenting this token, or nil for a bearer token.
    public func dpopProof(method: String, url: String) throws(SignInError) -> String? {
        guard tokenType == "DPoP", let proofKey = try ProofKey.fromEntry(storedProofKey) else { return nil }
        return try DPoP.proof(proofKey, method: method, url: url, accessToken: token.value)
    }

    public init(token: SignInToken, kind: TokenKind, subject: String, name: String) {
        self.token = token
        self.kind = kind
        self.subject = subject
        self.name = name
    }
}

extension SignInClient {
    /// The one token path: a token as `request` asks, with no browser.
    ///
    /// 0. The principal: the request's chain, else (with `appliesConfiguredChain`) the configuration's, else the person.
    /// 1. An ID token for an audience other than this client, without a service account: `.unsupported` (the
    ///    signed-in person's ID tokens are for this client only; another audience needs a service account).
    ///    A service account's ID token without an audience: `.unsupported` too.
    /// 2. The person's token: `restore` (no network while the stored one is fresh for `minimumValidity` and no
    ///    refresh is forced; one refresh for many callers and processes; rotation saved first).
    /// 3. A service account's: from the entry's encrypted cache while fresh, else minted through the IAM
    ///    Credentials API with the person's token (`serviceAccountAccessToken`, `serviceAccountIDToken`); a forced
    ///    refresh mints anew.
    /// 4. With `workloadIdentity`: an access token, or a service account's token, is bought through Google's STS
    ///    with the person's ID token (`federatedAccessToken`), cached the same way; the person's own ID token is
    ///    still the provider's.
    public func token(_ request: TokenRequest) throws(SignInError) -> IssuedToken {
        var request = request
        if request.serviceAccountChain.isEmpty && request.appliesConfiguredChain {
            request.serviceAccountChain = configuration.impersonateServiceAccount
        }
        let chain = request.serviceAccountChain
        if let federation = request.workloadIdentity, request.kind == .access || !chain.isEmpty {
            return try federatedToken(request, federation)
        }
        if request.kind == .access, request.audience != nil || request.resource != nil {
            guard chain.isEmpty else {
                throw .unsupported(reason: "a resource or an audience is asked for with the signed-in person's own access token; a service account's token is for the scopes it is minted with (leave out --impersonate-service-account, or --resource and --audience)")
            }
            return try targetedToken(request)
        }
        guard !chain.isEmpty else {
            if request.kind == .id, let audience = request.audience, audience != configuration.clientID {
                throw .unsupported(reason: "an ID token for audience \(audience) needs a service account (--impersonate-service-account SA, or impersonate_service_account): the signed-in person's ID tokens are for client \(configuration.clientID) only")
            }
            let user = try restore(account: request.account, minimumValidity: request.minimumValidity, forceRefresh: request.forceRefresh, token: request.kind)
            guard let t = request.kind == .id ? user.idToken : user.accessToken else { throw .noPreviousSignIn(reason: .noToken(request.kind)) }
            var issued = IssuedToken(token: t, kind: request.kind, subject: user.userID, name: user.profile.email ?? user.userID)
            if request.kind == .access, user.accessTokenType == "DPoP" {
                try bind(&issued, proofKey: user.storedProofKey, endpoints: user.endpoints, proofFor: request.proofFor)
            }
            return issued
        }
        let target = chain[chain.count - 1]
        // A forced refresh of a service account's token mints a new one: nothing cached is fresh enough for that.
        let validity = request.forceRefresh ? Duration.seconds(TokenRequest.maximumValidity * 2) : request.minimumValidity
        let t: SignInToken
        switch request.kind {
        case .access:
            t = try serviceAccountAccessToken(chain: chain, scopes: request.scopes ?? [SignInClient.cloudPlatformScope], account: request.account,
                                              minimumValidity: validity)
        case .id:
            guard let audience = request.audience else {
                throw .unsupported(reason: "a service account's ID token needs an audience: add --audience AUDIENCE (the service it is for)")
            }
            t = try serviceAccountIDToken(chain: chain, audience: audience, includeEmail: request.includeEmail, account: request.account,
                                          minimumValidity: validity)
        }
        return IssuedToken(token: t, kind: request.kind, subject: target, name: target)
    }

    /// A DPoP-bound access token: its type and key, and the proof `proofFor` asks for, never one for the provider's own
    /// endpoints (with a copied refresh token, such a proof buys tokens).
    private func bind(_ issued: inout IssuedToken, proofKey: String?, endpoints: ProviderEndpoints, proofFor: TokenRequest.DPoPTarget?) throws(SignInError) {
        issued.tokenType = "DPoP"
        issued.storedProofKey = proofKey
        guard let target = proofFor else { return }
        if let problem = target.problem { throw .unsupported(reason: "a DPoP proof: \(problem)") }
        if let own = endpoints.ownEndpointName(of: target.url) {
            throw .unsupported(reason: "a DPoP proof for the provider's own \(own) endpoint (\(target.url.withoutControlCharacters)) is never given out: signin makes its requests to the provider itself")
        }
        issued.dpopProof = try issued.dpopProof(method: target.method, url: target.url)
    }

    /// The person's access token for one API: exchanged for `audience` (RFC 8693), or for `resource` alone (RFC 8707).
    private func targetedToken(_ request: TokenRequest) throws(SignInError) -> IssuedToken {
        let validity = request.minimumValidity
        let (t, stored) = request.audience != nil
            ? try exchangedToken(audience: request.audience, resource: request.resource, account: request.account, minimumValidity: validity, forceRefresh: request.forceRefresh)
            : try resourceToken(request.resource!, account: request.account, minimumValidity: validity, forceRefresh: request.forceRefresh)
        var issued = IssuedToken(token: t, kind: .access, subject: stored.profile.userID, name: stored.profile.email ?? stored.profile.userID)
        issued.resource = request.resource
        issued.audience = request.audience
        if stored.accessTokenType == "DPoP" { try bind(&issued, proofKey: stored.dpopKey, endpoints: stored.endpoints, proofFor: request.proofFor) }
        return issued
    }

    /// Whether answering `request` for the person would refresh first (the stored token is not fresh enough,
    /// was marked rejected, or a refresh is forced). Reads the store only; no network.
    public func wouldRefresh(_ request: TokenRequest) throws(SignInError) -> Bool {
        guard let stored = try credentials(account: request.account) else { return false }
        if request.kind == .access, request.audience != nil || request.resource != nil {
            let key = request.audience != nil ? Self.exchangeKey(audience: request.audience, resource: request.resource) : Self.resourceKey(request.resource!)
            guard let t = stored.serviceAccountTokens?.first(where: { $0.key == key }) else { return true }
            return request.forceRefresh || t.expiry.timeIntervalSinceNow < request.minimumValidity.timeInterval
        }
        return request.forceRefresh || !isFresh(stored, minimumValidity: request.minimumValidity, token: request.kind)
    }

    private func federatedToken(_ request: TokenRequest, _ federation: WorkloadIdentityFederation) throws(SignInError) -> IssuedToken {
        let chain = request.serviceAccountChain
        let validity = request.minimumValidity
        let t: SignInToken
        switch request.kind {
        case .access:
            t = try federatedAccessToken(federation, scopes: request.scopes ?? [SignInClient.cloudPlatformScope], chain: chain, account: request.account,
                                         minimumValidity: validity, forceRefresh: request.forceRefresh)
        case .id:
            guard let audience = request.audience else {
                throw .unsupported(reason: "a service account's ID token needs an audience: add --audience AUDIENCE (the service it is for)")
            }
            t = try federatedServiceAccountIDToken(federation, chain: chain, audience: audience, includeEmail: request.includeEmail, account: request.account,
                                                   minimumValidity: validity, forceRefresh: request.forceRefresh)
        }
        if let target = chain.last { return IssuedToken(token: t, kind: request.kind, subject: target, name: target) }
        guard let stored = try credentials(account: request.account) else { throw noAccount() }
        return IssuedToken(token: t, kind: request.kind, subject: stored.profile.userID, name: stored.profile.email ?? stored.profile.userID)
    }
}
