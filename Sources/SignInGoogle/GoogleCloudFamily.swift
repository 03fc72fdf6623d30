import SignInBase
import SignInProtocol
import SignInStorage
import SignInGrant
import FoundationEssentials

/// Google Cloud as a provider family of the one token path: a service account's tokens minted with the person's
/// grant (`impersonate_service_account`, `--impersonate-service-account`), and federation (a token bought at
/// Google's STS with the person's ID token, `google_federation_audience`).
///
/// What it answers, once the client has resolved the principal (`configuredChain`):
/// 1. Federation: the request's `workloadIdentity`, else, for a token for Google Cloud (`forGoogleCloud`), the
///    configuration's. With it, an access token or a service account's token is bought through Google's STS
///    (`federatedAccessToken`, `federatedServiceAccountIDToken`); the person's own ID token stays the provider's.
/// 2. No service account: nothing (the client answers the person's own tokens).
/// 3. A service account with a resource or an audience for an access token: `.unsupported` (a service account's
///    token is for the scopes it is minted with).
/// 4. A service account's access token (scopes: the request's, else cloud-platform) or ID token (an audience is
///    needed) through the IAM Credentials API (`serviceAccountAccessToken`, `serviceAccountIDToken`), cached in the
///    entry; a forced refresh mints anew.
public struct GoogleCloudFamily: TokenFamily {
    public init() {}

    public var configurationSection: (any ConfigurationSection.Type)? { GoogleCloudSettings.self }

    public func configuredChain(_ configuration: SignInConfiguration) -> [String] { configuration.impersonateServiceAccount }

    /// The hello's keys of Google's endpoints, which a forwarded session's tools use (`signin google external-account`).
    public static let stsEndpointSetting = "google_sts_endpoint", iamCredentialsEndpointSetting = "iam_credentials_endpoint"

    public var forwardedSettingKeys: [String] { [Self.stsEndpointSetting, Self.iamCredentialsEndpointSetting] }

    public func forwardedSettings(_ configuration: SignInConfiguration) -> [String: String] {
        [Self.stsEndpointSetting: configuration.googleSTSEndpoint, Self.iamCredentialsEndpointSetting: configuration.iamCredentialsEndpoint]
    }

    /// The agent's query key of a token for Google Cloud's APIs (`TokenRequest.forGoogleCloud`): `1`, which the
    /// agent's configuration may federate.
    public static let agentQueryKey = "google_cloud"

    public var agentQueryKeys: [String] { [Self.agentQueryKey] }

    public func agentQuery(_ request: TokenRequest) -> [(String, String)] {
        request.forGoogleCloud ? [(Self.agentQueryKey, "1")] : []
    }

    public func readAgentQuery(_ query: [String: String], into request: inout TokenRequest) -> String? {
        switch query[Self.agentQueryKey] {
        case nil, "", "0": request.forGoogleCloud = false
        case "1": request.forGoogleCloud = true
        default: return "\(Self.agentQueryKey) must be 1 or 0"
        }
        return nil
    }

    package func scopeRules(for request: TokenRequest, configuration: SignInConfiguration) -> ProviderRules? {
        request.forGoogleCloud ? GoogleProvider.rules : nil
    }

    /// The federation `request` is answered through, or nil: its own, else the configuration's for a token for Google
    /// Cloud (step 1).
    public static func federation(for request: TokenRequest, configuration: SignInConfiguration) -> WorkloadIdentityFederation? {
        request.workloadIdentity ?? (request.forGoogleCloud ? configuration.googleFederation : nil)
    }

    public func token(for request: TokenRequest, grant: any PersonGrant) throws(SignInError) -> IssuedToken? {
        let chain = request.serviceAccountChain
        if let federation = Self.federation(for: request, configuration: grant.configuration), request.kind == .access || !chain.isEmpty {
            return try federatedToken(request, federation, grant: grant)
        }
        guard let target = chain.last else { return nil }
        if request.kind == .access, request.audience != nil || request.resource != nil {
            throw .unsupported(reason: "a resource or an audience is asked for with the signed-in person's own access token; a service account's token is for the scopes it is minted with (leave out --impersonate-service-account, or --resource and --audience)")
        }
        // A forced refresh of a service account's token mints a new one: nothing cached is fresh enough for that.
        let validity = request.forceRefresh ? Duration.seconds(TokenRequest.maximumValidity * 2) : request.minimumValidity
        let t: SignInToken
        switch request.kind {
        case .access:
            t = try grant.serviceAccountAccessToken(chain: chain, scopes: request.scopes ?? [GoogleCloudFamily.cloudPlatformScope], account: request.account,
                                                    minimumValidity: validity)
        case .id:
            guard let audience = request.audience else {
                throw .unsupported(reason: "a service account's ID token needs an audience: add --audience AUDIENCE (the service it is for)")
            }
            t = try grant.serviceAccountIDToken(chain: chain, audience: audience, includeEmail: request.includeEmail, account: request.account,
                                                minimumValidity: validity)
        }
        return IssuedToken(token: t, kind: request.kind, subject: target, name: target)
    }

    private func federatedToken(_ request: TokenRequest, _ federation: WorkloadIdentityFederation, grant: any PersonGrant) throws(SignInError) -> IssuedToken {
        let chain = request.serviceAccountChain
        let validity = request.minimumValidity
        let t: SignInToken
        switch request.kind {
        case .access:
            t = try grant.federatedAccessToken(federation, scopes: request.scopes ?? [GoogleCloudFamily.cloudPlatformScope], chain: chain, account: request.account,
                                               minimumValidity: validity, forceRefresh: request.forceRefresh)
        case .id:
            guard let audience = request.audience else {
                throw .unsupported(reason: "a service account's ID token needs an audience: add --audience AUDIENCE (the service it is for)")
            }
            t = try grant.federatedServiceAccountIDToken(federation, chain: chain, audience: audience, includeEmail: request.includeEmail, account: request.account,
                                                         minimumValidity: validity, forceRefresh: request.forceRefresh)
        }
        if let target = chain.last { return IssuedToken(token: t, kind: request.kind, subject: target, name: target) }
        guard let stored = try grant.credentials(account: request.account) else { throw grant.noAccount() }
        return IssuedToken(token: t, kind: request.kind, subject: stored.profile.userID, name: stored.profile.email ?? stored.profile.userID)
    }

    /// The default scope of a service account's or a federated access token (what gcloud asks for).
    public static let cloudPlatformScope = "https://www.googleapis.com/auth/cloud-platform"
}

/// Google Cloud's part of a `TokenRequest`.
public struct GoogleCloudTarget: TokenRequestParameter {
    /// See `TokenRequest.forGoogleCloud`.
    public var forGoogleCloud = false
    /// See `TokenRequest.workloadIdentity`.
    public var workloadIdentity: WorkloadIdentityFederation?

    public init() {}

    public var requestName: String? { forGoogleCloud || workloadIdentity != nil ? " for Google Cloud" : nil }

    public var approvalParts: [String] {
        guard requestName != nil else { return [] }
        return [forGoogleCloud ? "google-cloud" : "", workloadIdentity.map { "wif:\($0.audience)" } ?? ""]
    }
}

extension TokenRequest {
    /// The token is for Google Cloud's APIs (the metadata server's): with the configuration's
    /// `google_federation_audience`, an access token (or a service account's token) is then bought at Google's STS
    /// with the person's ID token. The one token path reads the configuration; the consumer does not.
    public var forGoogleCloud: Bool {
        get { familyParameters[GoogleCloudTarget.self].forGoogleCloud }
        set { familyParameters[GoogleCloudTarget.self].forGoogleCloud = newValue }
    }

    /// Google Cloud through workload or workforce identity federation: an access token (or, with a chain, a
    /// service account's token) is bought at Google's STS with the person's ID token instead of being the
    /// provider's own access token. nil: the provider's tokens (and Google's, when the provider is Google).
    public var workloadIdentity: WorkloadIdentityFederation? {
        get { familyParameters[GoogleCloudTarget.self].workloadIdentity }
        set { familyParameters[GoogleCloudTarget.self].workloadIdentity = newValue }
    }
}
