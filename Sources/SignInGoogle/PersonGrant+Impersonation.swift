import SignInBase
import SignInProtocol
import SignInStorage
import SignInGrant
import FoundationEssentials

/// Service-account impersonation, as `gcloud --impersonate-service-account` does it: the person's grant buys a
/// service account's short-lived tokens through the IAM Service Account Credentials API.
extension DerivedTokenKey.Kind {
    /// A service account's access token: the chain, then `scopes` and the scopes.
    static let serviceAccountAccess = DerivedTokenKey.Kind("access")
    /// A service account's ID token: the chain, then `audience`, the audience and `email` or `no-email`.
    static let serviceAccountID = DerivedTokenKey.Kind("id")
}

extension DerivedTokenKey {
    static func serviceAccountAccess(chain: [String], scopes: [String]) -> DerivedTokenKey {
        DerivedTokenKey(.serviceAccountAccess, chain + ["scopes"] + scopes.sorted())
    }

    static func serviceAccountID(chain: [String], audience: String, includeEmail: Bool) -> DerivedTokenKey {
        DerivedTokenKey(.serviceAccountID, chain + ["audience", audience, includeEmail ? "email" : "no-email"])
    }
}

extension PersonGrant {
    /// A service account's access token, minted with the person's grant.
    ///
    /// 1. `chain` is the service account (last) and any delegates before it; empty is a `.configInvalid`-free
    ///    `.unsupported` error (nothing to impersonate).
    /// 2. A cached token of this chain and these scopes, valid for `minimumValidity` more, is returned with no
    ///    network (kept encrypted in the account's entry, never in clear).
    /// 3. Otherwise the person's access token is restored (refreshed when needed, as `restore` does) and
    ///    `generateAccessToken` is asked, under the account's lock so that parallel callers mint once; a 401 from
    ///    the API (the person's token was revoked early) refreshes it once and asks again.
    /// 4. The new token is saved in the entry beside the person's tokens (expired ones are dropped) and returned.
    ///    A refusal is a `.providerError` naming the account and the role it needs; nothing stored changes.
    public func serviceAccountAccessToken(chain: [String], scopes: [String] = [GoogleCloudFamily.cloudPlatformScope], account: String? = nil,
                                          minimumValidity: Duration = .seconds(60)) throws(SignInError) -> SignInToken {
        guard let c = IAMCredentialsClient.Chain(chain) else { throw .unsupported(reason: "no service account to impersonate was named") }
        return try serviceAccountToken(key: .serviceAccountAccess(chain: chain, scopes: scopes), account: account, minimumValidity: minimumValidity) { iam, bearer throws(SignInError) in
            try iam.generateAccessToken(c, scopes: scopes, bearer: bearer)
        }
    }

    /// A service account's ID token for `audience` (with its `email` claim when `includeEmail`), minted as
    /// `serviceAccountAccessToken` mints access tokens and cached the same way.
    public func serviceAccountIDToken(chain: [String], audience: String, includeEmail: Bool = true, account: String? = nil,
                                      minimumValidity: Duration = .seconds(60)) throws(SignInError) -> SignInToken {
        guard let c = IAMCredentialsClient.Chain(chain) else { throw .unsupported(reason: "no service account to impersonate was named") }
        return try serviceAccountToken(key: .serviceAccountID(chain: chain, audience: audience, includeEmail: includeEmail), account: account, minimumValidity: minimumValidity) { iam, bearer throws(SignInError) in
            try iam.generateIDToken(c, audience: audience, includeEmail: includeEmail, bearer: bearer)
        }
    }

    private func serviceAccountToken(key: DerivedTokenKey, account: String?, minimumValidity: Duration,
                                     mint: @escaping (IAMCredentialsClient, String) throws(SignInError) -> SignInToken) throws(SignInError) -> SignInToken {
        let iam = IAMCredentialsClient(configuration: configuration)
        return try derivedCredential(key, account: account, minimumValidity: minimumValidity, buyingWith: .access,
                                     retryWhen: { $0 == "UNAUTHENTICATED" || $0 == "http_401" }, bearer: nil) { bearer throws(SignInError) in try mint(iam, bearer) }
    }
}
