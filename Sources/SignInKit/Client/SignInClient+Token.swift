import SignInBase
import SignInProtocol
import SignInStorage
import SignInGrant
import FoundationEssentials

// The token use case: `SignInClient.token(_:)`, the one path every consumer's token takes (`signin token` and
// `id-token`, every bridge, the metadata server, the agent for a forwarded session). The files in which a cached
// `signin token` makes a decision, as `bench/walks` counts them (callgrind: a conditional branch that ran), beside the
// system layer's and the values' (FileIO, SystemCall, ProcessEnvironment, JSONValue, EndpointURL, the C shims):
//   - SignInCLI: CLI.swift (argv, the configuration's path), ForwardedAgent.swift (an agent over SSH, or not).
//   - SignInProtocol/Configuration: ConfigurationLocation.swift (which file), SignInConfiguration.swift (the core's
//     keys), ConfigurationSection.swift (the families' keys).
//   - SignInKit/Client: this file (the principal, the families, the target, the scope rule, freshness, the answer's
//     type) and SignInClient+Accounts.swift (which account).
//   - SignInStorage: CredentialStore.swift and its rooms +Folder, +CurrentAccount and +Reading, KernelEntries.swift,
//     StoredCredentials.swift (the entry found, read and decrypted with the key where it lives, or as the kernel
//     holds it decrypted).
// A request that names a service account or a family's parameters goes to the families (TokenFamilies); a forwarded
// agent's client end crosses the socket with the same `TokenRequest` (Agent/AgentProtocol.swift).

extension SignInClient {
    /// The one token path: a token as `request` asks, with no browser.
    ///
    /// 0. The principal (`request.principal`): a given service-account chain; `.configured`, the chain a family's
    ///    configuration section names (Google's `impersonate_service_account`), else the person; `.person`, the person
    ///    whatever the configuration says. No consumer reads the setting itself.
    /// 1. A request that names a service account or carries a family's parameters (Google's `forGoogleCloud`,
    ///    `workloadIdentity`) is offered to each family (`TokenFamilies`); the first that derives it answers (Google's
    ///    rule is `GoogleCloudFamily`'s header: a service account's tokens, federation), cached in the entry.
    /// 2. The person's access token for one API (`audience`, `resource`): `targetedToken` (RFC 8693, RFC 8707).
    /// 3. An ID token for an audience other than this client: `.unsupported` (the signed-in person's ID tokens are for
    ///    this client only; another audience needs a service account).
    /// 4. The person's token: `restore` (no network while the stored one is fresh for `minimumValidity` and no
    ///    refresh is forced; one refresh for many callers and processes; rotation saved first). Scopes a request
    ///    names for the person's access token must all be granted (in the spelling of the family the token is for, or
    ///    the provider's): `.unsupported` naming the missing ones otherwise, as a tool must not get a token its API
    ///    refuses.
    /// 5. The answer says its type: `DPoP` for an access token bound to this machine's key (with the proof
    ///    `proofFor` asks, never one for the provider's own endpoints), else `Bearer`; `IssuedToken.presented(to:)`
    ///    renders either.
    public func token(_ request: TokenRequest) throws(SignInError) -> IssuedToken {
        var request = request
        request.principal = .serviceAccount(chain: serviceAccountChain(for: request.principal))
        if !request.serviceAccountChain.isEmpty || !request.familyParameters.isEmpty {
            for family in TokenFamilies.all {
                if let derived = try family.token(for: request, grant: self) { return derived }
            }
        }
        if request.kind == .access, request.audience != nil || request.resource != nil {
            return try targetedToken(request)
        }
        if request.kind == .id, let audience = request.audience, audience != configuration.clientID {
            throw .unsupported(reason: "an ID token for audience \(audience) needs a service account (--impersonate-service-account SA, or impersonate_service_account): the signed-in person's ID tokens are for client \(configuration.clientID) only")
        }
        let user = try restore(account: request.account, minimumValidity: request.minimumValidity, forceRefresh: request.forceRefresh, token: request.kind)
        if request.kind == .access, let asked = request.scopes, let missing = scopeRules(for: request).scopesNotGranted(asked, granted: user.grantedScopes) {
            throw .unsupported(reason: "the sign-in of \(user.profile.email ?? user.userID) was not granted \(missing.joined(separator: ", ")); add to the configuration's scopes and sign in again")
        }
        guard let t = request.kind == .id ? user.idToken : user.accessToken else { throw .noPreviousSignIn(reason: .noToken(request.kind)) }
        var issued = IssuedToken(token: t, kind: request.kind, subject: user.userID, name: user.profile.email ?? user.userID)
        if request.kind == .access, user.accessTokenType == "DPoP" {
            try bind(&issued, proofKey: user.storedProofKey, endpoints: user.endpoints, proofFor: request.proofFor)
        }
        return issued
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
        let t: SignInToken, stored: StoredCredentials
        var unrestricted = false
        if request.audience != nil {
            (t, stored) = try exchangedToken(audience: request.audience, resource: request.resource, account: request.account, minimumValidity: validity, forceRefresh: request.forceRefresh)
        } else {
            let kept = try resourceToken(request.resource!, account: request.account, minimumValidity: validity, forceRefresh: request.forceRefresh)
            (t, stored, unrestricted) = (kept.token, kept.stored, kept.unrestricted)
        }
        var issued = IssuedToken(token: t, kind: .access, subject: stored.profile.userID, name: stored.profile.email ?? stored.profile.userID)
        issued.evidentlyUnrestricted = unrestricted
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
            let key: DerivedTokenKey = request.audience != nil ? .exchange(audience: request.audience, resource: request.resource) : .resource(request.resource!)
            guard let t = stored.derivedToken(key) else { return true }
            return request.forceRefresh || t.expiry.timeIntervalSinceNow < request.minimumValidity.timeInterval
        }
        return request.forceRefresh || !isFresh(stored, minimumValidity: request.minimumValidity, token: request.kind)
    }

    /// The service-account chain `principal` comes to (empty: the person): step 0's rule, which a consumer that
    /// shows whom it serves (the metadata server's account) asks too.
    public func serviceAccountChain(for principal: TokenRequest.Principal) -> [String] {
        switch principal {
        case .configured: return TokenFamilies.all.lazy.map { $0.configuredChain(self.configuration) }.first { !$0.isEmpty } ?? []
        case .person: return []
        case .serviceAccount(let chain): return chain
        }
    }

    /// Whose scope names a request's scopes are in: a family's for a token for its APIs (Google's for Google Cloud, whose
    /// tools ask for `email` by its long name too, whoever the provider), else the provider's.
    package func scopeRules(for request: TokenRequest) -> ProviderRules {
        TokenFamilies.all.lazy.compactMap { $0.scopeRules(for: request, configuration: self.configuration) }.first ?? configuration.providerRules
    }

    /// Whether the entry's token of `token` kind is there, not marked rejected, and valid `minimumValidity` more:
    /// the freshness rule of step 2 (and of `restore`).
    /// The most a minimum validity may be for a short-lived token's half-life rule (`isFresh`) to apply: the default
    /// minute of `signin token` and `restorePreviousSignIn`.
    static let boundedMinimumValidity: TimeInterval = 60

    func isFresh(_ c: StoredCredentials, minimumValidity: Duration, token: TokenKind = .access) -> Bool {
        let minimumValidity = minimumValidity.timeInterval
        switch token {
        case .access:
            guard c.accessToken != nil, c.accessTokenRejectedAt == nil else { return false }
            // A token the server gave no lifetime and no refresh token (a GitHub OAuth app's, which lives until it is
            // revoked): fresh until an API rejects it, since nothing could replace it anyway.
            guard let exp = c.accessTokenExpiry else { return c.refreshToken == nil }
            // A refreshed token that never lives the default minimum (a 30 s token asked for the usual minute) is fresh
            // for its first half: otherwise every call would refresh, and two consumers would each hold a different
            // token. A longer minimum is asked on purpose (`--min-ttl 3600`) and honoured as asked; the token a sign-in
            // got is refreshed once as before (its lifetime is recorded by a refresh only).
            if let lifetime = c.accessTokenLifetime, lifetime > 0, lifetime <= minimumValidity, minimumValidity <= Self.boundedMinimumValidity {
                return exp.timeIntervalSinceNow >= lifetime / 2
            }
            return exp.timeIntervalSinceNow >= minimumValidity
        case .id:
            guard c.idToken != nil, let exp = c.idTokenExpiry else { return false }
            return exp.timeIntervalSinceNow >= minimumValidity
        }
    }

}
