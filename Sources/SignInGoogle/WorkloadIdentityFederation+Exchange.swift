import SignInBase
import SignInProtocol
import SignInStorage
import SignInTransport
import SignInGrant
import FoundationEssentials

extension WorkloadIdentityFederation {
    /// The federated access token for `scopes`.
    func exchange(idToken: String, scopes: [String], settings: HTTPSettings) throws(SignInError) -> SignInToken {
        var extra: [(String, String)] = []
        if let userProject { extra.append(("options", JSONValueOut.object(["userProject": .string(userProject)]).text)) }
        let sts = TokenExchange(endpoint: stsEndpoint, endpointName: Self.endpointName, http: HTTPClient(settings))
        do throws(SignInError) {
            return try sts.exchange(idToken: idToken, audience: audience, scopes: scopes, extra: extra)
        } catch .providerError(let endpoint, let code, let detail) where code == "invalid_target" || code == "invalid_grant" || code == "unauthorized_client" {
            let fix = code == "invalid_target"
                ? "the pool provider \(audience) does not exist, is disabled, or does not trust this issuer and client ID (its allowed audiences)"
                : "Google's STS refused the ID token for \(audience): the pool provider must name this issuer, and its attribute condition must admit this person"
            throw .providerError(endpoint: endpoint, code: code, detail: fix + (detail.map { " (\($0))" } ?? ""))
        }
    }
}

extension DerivedTokenKey.Kind {
    /// A federated access token: the pool provider, user project and STS, then `scopes` and the scopes.
    static let federated = DerivedTokenKey.Kind("federated")
    /// A service account's access token bought with a federated one: the federation, the chain, `scopes`, the scopes.
    static let federatedServiceAccount = DerivedTokenKey.Kind("federated-sa")
    /// A service account's ID token bought with a federated one: the federation, the chain, `audience`, the audience
    /// and `email` or `no-email`.
    static let federatedServiceAccountID = DerivedTokenKey.Kind("federated-sa-id")
}

extension WorkloadIdentityFederation {
    /// What tells two federations apart in a cache key.
    var keyParts: [String] { [audience, userProject ?? "", stsEndpoint] }
}

extension PersonGrant {
    /// A Google Cloud access token through `federation`, with no browser.
    ///
    /// 1. Without a service account: the federated token for `scopes`, cached encrypted in the account's entry
    ///    while valid for `minimumValidity` more; else the person's ID token (refreshed when needed) is exchanged at
    ///    the STS once under the account's lock. An ID token the STS finds expired is refreshed once.
    /// 2. With `chain`: the service account's token, cached the same way, minted through the IAM Service Account
    ///    Credentials API with the federated token (cloud-platform) as the bearer, as google-auth's
    ///    `service_account_impersonation_url` does.
    /// 3. A refusal is a `.providerError` that names the pool provider or the service account and what to fix.
    public func federatedAccessToken(_ federation: WorkloadIdentityFederation, scopes: [String] = [GoogleCloudFamily.cloudPlatformScope], chain: [String] = [],
                                     account: String? = nil, minimumValidity: Duration = .seconds(60), forceRefresh: Bool = false) throws(SignInError) -> SignInToken {
        let validity = forceRefresh ? Duration.seconds(TokenRequest.maximumValidity * 2) : minimumValidity
        let settings = configuration.httpSettings
        guard let c = IAMCredentialsClient.Chain(chain) else {
            let key = DerivedTokenKey(.federated, federation.keyParts + ["scopes"] + scopes.sorted())
            return try derivedCredential(key, account: account, minimumValidity: validity, buyingWith: .id,
                                         retryWhen: { $0 == "invalid_grant" }, bearer: nil) { idToken throws(SignInError) in
                try federation.exchange(idToken: idToken, scopes: scopes, settings: settings)
            }
        }
        let key = DerivedTokenKey(.federatedServiceAccount, federation.keyParts + chain + ["scopes"] + scopes.sorted())
        return try federatedServiceAccountToken(federation, key: key, account: account, minimumValidity: validity) { iam, bearer throws(SignInError) in
            try iam.generateAccessToken(c, scopes: scopes, bearer: bearer)
        }
    }

    /// A service account's ID token for `audience` through `federation`, minted with the federated token and
    /// cached as `federatedAccessToken` caches.
    public func federatedServiceAccountIDToken(_ federation: WorkloadIdentityFederation, chain: [String], audience: String, includeEmail: Bool = true,
                                               account: String? = nil, minimumValidity: Duration = .seconds(60), forceRefresh: Bool = false) throws(SignInError) -> SignInToken {
        guard let c = IAMCredentialsClient.Chain(chain) else { throw .unsupported(reason: "no service account to impersonate was named") }
        let validity = forceRefresh ? Duration.seconds(TokenRequest.maximumValidity * 2) : minimumValidity
        let key = DerivedTokenKey(.federatedServiceAccountID, federation.keyParts + chain + ["audience", audience, includeEmail ? "email" : "no-email"])
        return try federatedServiceAccountToken(federation, key: key, account: account, minimumValidity: validity) { iam, bearer throws(SignInError) in
            try iam.generateIDToken(c, audience: audience, includeEmail: includeEmail, bearer: bearer)
        }
    }

    private func federatedServiceAccountToken(_ federation: WorkloadIdentityFederation, key: DerivedTokenKey, account: String?, minimumValidity: Duration,
                                              mint: @escaping (IAMCredentialsClient, String) throws(SignInError) -> SignInToken) throws(SignInError) -> SignInToken {
        let iam = IAMCredentialsClient(configuration: configuration)
        return try derivedCredential(key, account: account, minimumValidity: minimumValidity, buyingWith: .id,
                                    retryWhen: { $0 == "UNAUTHENTICATED" || $0 == "http_401" },
                                    bearer: { force throws(SignInError) in
                                        try self.federatedAccessToken(federation, account: account, minimumValidity: .seconds(300), forceRefresh: force).value
                                    }) { bearer throws(SignInError) in try mint(iam, bearer) }
    }
}

/// Google federation for async code, as SignInKit's `SignInClientProtocol` has it (which composes this): a stand-in gets
/// `.unsupported`, a `PersonGrant` (`SignInClient`) runs the synchronous namesakes on a thread of their own,
/// cancellable (a cancelled task cuts a request on its way, as `token(for:)` does).
public protocol GoogleCloudClient: Sendable {
    /// A Google Cloud access token through federation (default, for a stand-in: `.unsupported`).
    func federatedGoogleAccessToken(_ federation: WorkloadIdentityFederation, scopes: [String], chain: [String], account: String?,
                                    minimumValidity: Duration, forceRefresh: Bool) async throws(SignInError) -> SignInToken
    /// A service account's ID token through federation (default, for a stand-in: `.unsupported`).
    func federatedGoogleIDToken(_ federation: WorkloadIdentityFederation, chain: [String], audience: String, includeEmail: Bool, account: String?,
                                minimumValidity: Duration, forceRefresh: Bool) async throws(SignInError) -> SignInToken
}

extension GoogleCloudClient {
    public func federatedGoogleAccessToken(_ federation: WorkloadIdentityFederation, scopes: [String], chain: [String], account: String?,
                                           minimumValidity: Duration, forceRefresh: Bool) async throws(SignInError) -> SignInToken {
        throw .unsupported(reason: "this stand-in for SignInClient gives no federated token; implement federatedGoogleAccessToken")
    }

    public func federatedGoogleIDToken(_ federation: WorkloadIdentityFederation, chain: [String], audience: String, includeEmail: Bool, account: String?,
                                       minimumValidity: Duration, forceRefresh: Bool) async throws(SignInError) -> SignInToken {
        throw .unsupported(reason: "this stand-in for SignInClient gives no federated ID token; implement federatedGoogleIDToken")
    }
}

extension GoogleCloudClient where Self: PersonGrant {
    /// `federatedAccessToken(_:scopes:chain:account:minimumValidity:forceRefresh:)` for async code, cancellable:
    /// a Google Cloud access token through workload or workforce identity federation (a service account's when
    /// `chain` names one).
    public func federatedGoogleAccessToken(_ federation: WorkloadIdentityFederation, scopes: [String] = [GoogleCloudFamily.cloudPlatformScope], chain: [String] = [],
                                           account: String? = nil, minimumValidity: Duration = .seconds(60), forceRefresh: Bool = false) async throws(SignInError) -> SignInToken {
        try await offPool("the federation request") { (_) throws(SignInError) -> SignInToken in
            try self.federatedAccessToken(federation, scopes: scopes, chain: chain, account: account, minimumValidity: minimumValidity, forceRefresh: forceRefresh)
        }
    }

    /// `federatedServiceAccountIDToken(_:chain:audience:includeEmail:account:minimumValidity:forceRefresh:)` for
    /// async code, cancellable: a service account's ID token for `audience` through federation.
    public func federatedGoogleIDToken(_ federation: WorkloadIdentityFederation, chain: [String], audience: String, includeEmail: Bool = true,
                                       account: String? = nil, minimumValidity: Duration = .seconds(60), forceRefresh: Bool = false) async throws(SignInError) -> SignInToken {
        try await offPool("the federation request") { (_) throws(SignInError) -> SignInToken in
            try self.federatedServiceAccountIDToken(federation, chain: chain, audience: audience, includeEmail: includeEmail, account: account,
                                                    minimumValidity: minimumValidity, forceRefresh: forceRefresh)
        }
    }
}
