import FoundationEssentials

/// Service-account impersonation, as `gcloud --impersonate-service-account` does it: the person's grant buys a
/// service account's short-lived tokens through the IAM Service Account Credentials API.
extension SignInClient {
    /// The default scope of an impersonated access token (what gcloud asks for).
    public static let cloudPlatformScope = "https://www.googleapis.com/auth/cloud-platform"

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
    public func serviceAccountAccessToken(chain: [String], scopes: [String] = [SignInClient.cloudPlatformScope], account: String? = nil,
                                          minimumValidity: Duration = .seconds(60)) throws(SignInError) -> SignInToken {
        guard let c = IAMCredentialsClient.Chain(chain) else { throw .unsupported(reason: "no service account to impersonate was named") }
        let key = "access|" + (chain + ["scopes"] + scopes.sorted()).joined(separator: " ")
        return try serviceAccountToken(key: key, account: account, minimumValidity: minimumValidity) { iam, bearer throws(SignInError) in
            try iam.generateAccessToken(c, scopes: scopes, bearer: bearer)
        }
    }

    /// A service account's ID token for `audience` (with its `email` claim when `includeEmail`), minted as
    /// `serviceAccountAccessToken` mints access tokens and cached the same way.
    public func serviceAccountIDToken(chain: [String], audience: String, includeEmail: Bool = true, account: String? = nil,
                                      minimumValidity: Duration = .seconds(60)) throws(SignInError) -> SignInToken {
        guard let c = IAMCredentialsClient.Chain(chain) else { throw .unsupported(reason: "no service account to impersonate was named") }
        let key = "id|" + (chain + ["audience", audience, includeEmail ? "email" : "no-email"]).joined(separator: " ")
        return try serviceAccountToken(key: key, account: account, minimumValidity: minimumValidity) { iam, bearer throws(SignInError) in
            try iam.generateIDToken(c, audience: audience, includeEmail: includeEmail, bearer: bearer)
        }
    }

    private func serviceAccountToken(key: String, account: String?, minimumValidity: Duration,
                                     mint: (IAMCredentialsClient, String) throws(SignInError) -> SignInToken) throws(SignInError) -> SignInToken {
        let margin = minimumValidity.timeInterval
        func cached(_ c: StoredCredentials) -> SignInToken? {
            guard let t = c.serviceAccountTokens?.first(where: { $0.key == key }), t.expiry.timeIntervalSinceNow > margin else { return nil }
            return SignInToken(value: t.value, expirationDate: t.expiry)
        }
        guard let stored = try credentials(account: account) else { throw noAccount() }
        if stored.grantEndedAt == nil, let hit = cached(stored) { return hit }
        let person = try restore(account: account)
        let subject = person.userID
        return try storage.withExclusiveAccess(for: identity, subject: subject) { () throws(SignInError) -> SignInToken in
            guard let current = try storage.credentials(for: identity, subject: subject) else { throw .noPreviousSignIn(reason: .signedOutMeanwhile) }
            if let hit = cached(current) { return hit }
            let iam = IAMCredentialsClient(configuration: configuration)
            let minted: SignInToken
            do throws(SignInError) {
                minted = try mint(iam, current.accessToken ?? person.accessToken?.value ?? "")
            } catch .providerError(_, let code, _) where code == "UNAUTHENTICATED" || code == "http_401" {
                let renewed = try restore(account: subject, forceRefresh: true)
                minted = try mint(iam, renewed.accessToken?.value ?? "")
            }
            guard let expiry = minted.expirationDate else { return minted }
            var next = try storage.credentials(for: identity, subject: subject) ?? current
            var tokens = (next.serviceAccountTokens ?? []).filter { $0.key != key && $0.expiry > Date() }
            tokens.append(.init(key: key, value: minted.value, expiry: expiry))
            next.serviceAccountTokens = Array(tokens.suffix(32))
            try storage.save(next)
            return minted
        }
    }
}
