import SignInBase
import SignInProtocol
import SignInStorage
import SignInTransport
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

extension SignInClient {
    /// A Google Cloud access token through `federation`, with no browser.
    ///
    /// 1. Without a service account: the federated token for `scopes`, cached encrypted in the account's entry
    ///    while valid for `minimumValidity` more; else the person's ID token (refreshed when needed) is exchanged at
    ///    the STS once under the account's lock. An ID token the STS finds expired is refreshed once.
    /// 2. With `chain`: the service account's token, cached the same way, minted through the IAM Service Account
    ///    Credentials API with the federated token (cloud-platform) as the bearer, as google-auth's
    ///    `service_account_impersonation_url` does.
    /// 3. A refusal is a `.providerError` that names the pool provider or the service account and what to fix.
    public func federatedAccessToken(_ federation: WorkloadIdentityFederation, scopes: [String] = [SignInClient.cloudPlatformScope], chain: [String] = [],
                                     account: String? = nil, minimumValidity: Duration = .seconds(60), forceRefresh: Bool = false) throws(SignInError) -> SignInToken {
        let validity = forceRefresh ? Duration.seconds(TokenRequest.maximumValidity * 2) : minimumValidity
        let settings = configuration.httpSettings
        let where_ = [federation.audience, federation.userProject ?? "", federation.stsEndpoint]
        guard let c = IAMCredentialsClient.Chain(chain) else {
            let key = "federated|" + (where_ + ["scopes"] + scopes.sorted()).joined(separator: " ")
            return try cachedCredential(key: key, account: account, minimumValidity: validity, buyingWith: .id,
                                        retryWhen: { $0 == "invalid_grant" }) { idToken throws(SignInError) in
                try federation.exchange(idToken: idToken, scopes: scopes, settings: settings)
            }
        }
        let key = "federated-sa|" + (where_ + chain + ["scopes"] + scopes.sorted()).joined(separator: " ")
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
        let key = "federated-sa-id|" + ([federation.audience, federation.userProject ?? "", federation.stsEndpoint] + chain + ["audience", audience, includeEmail ? "email" : "no-email"])
            .joined(separator: " ")
        return try federatedServiceAccountToken(federation, key: key, account: account, minimumValidity: validity) { iam, bearer throws(SignInError) in
            try iam.generateIDToken(c, audience: audience, includeEmail: includeEmail, bearer: bearer)
        }
    }

    private func federatedServiceAccountToken(_ federation: WorkloadIdentityFederation, key: String, account: String?, minimumValidity: Duration,
                                              mint: @escaping (IAMCredentialsClient, String) throws(SignInError) -> SignInToken) throws(SignInError) -> SignInToken {
        let iam = IAMCredentialsClient(configuration: configuration)
        return try cachedCredential(key: key, account: account, minimumValidity: minimumValidity, buyingWith: .id,
                                    retryWhen: { $0 == "UNAUTHENTICATED" || $0 == "http_401" },
                                    bearer: { force throws(SignInError) in
                                        try self.federatedAccessToken(federation, account: account, minimumValidity: .seconds(300), forceRefresh: force).value
                                    }) { bearer throws(SignInError) in try mint(iam, bearer) }
    }
}
