import SignInBase
import SignInProtocol
import SignInStorage
import SignInGrant
import FoundationEssentials

/// AWS roles from any OpenID provider: the signed-in person's ID token (its audience this client) exchanged at
/// STS for a role's temporary credentials, as aws-cli's `credential_process` takes them.
extension DerivedTokenKey.Kind {
    /// An AWS role's keys: the role, the session name, the duration in seconds and the STS endpoint.
    static let awsRole = DerivedTokenKey.Kind("aws")
}

extension PersonGrant {
    /// A role's credentials for `request`, with no browser: `AWSRoleSource`'s rule with this machine's ID token.
    ///
    /// 1. A request STS would refuse is `.unsupported`, before any network (`AWSRoleSource.check`).
    /// 2. Credentials of this role, session name, duration and STS endpoint, cached in the account's entry
    ///    (encrypted, as a service account's tokens are) and valid for `effectiveMinimumValidity` more, are
    ///    returned with no network, unless a refresh is forced.
    /// 3. Otherwise the person's ID token is restored (refreshed when needed) and STS `AssumeRoleWithWebIdentity`
    ///    is called once under the account's lock, however many processes ask at once; STS finding the ID token
    ///    expired refreshes it once and asks again (`AWSRoleSource.refreshesIDToken`).
    /// 4. The credentials are cached and returned. A refusal is a `.providerError` naming the role and what to fix;
    ///    nothing stored changes.
    public func awsCredentials(_ request: AWSRoleRequest) throws(SignInError) -> AWSCredentials {
        try AWSRoleSource.check(request)
        let sts = AWSSecurityTokenService(configuration: configuration)
        let session = try AWSRoleSource.sessionName(request) { () throws(SignInError) -> String in
            guard let stored = try credentials(account: request.account) else { throw noAccount() }
            return stored.profile.email ?? stored.profile.userID
        }
        let seconds = request.duration.components.seconds
        let key = DerivedTokenKey(.awsRole, [request.roleARN, session, String(seconds), sts.endpoint])
        // A forced refresh asks STS: nothing cached is fresh enough for that.
        let validity = request.forceRefresh ? Duration.seconds(2 * 43_200) : request.effectiveMinimumValidity
        return try derivedCredential(key, account: request.account, minimumValidity: validity, buyingWith: .id,
                                     retryWhen: AWSRoleSource.refreshesIDToken, bearer: nil) { idToken throws(SignInError) in
            try sts.assumeRole(request.roleARN, idToken: idToken, sessionName: session, duration: request.duration)
        }
    }
}

/// AWS as a provider family: its configuration section (`aws_region`, `aws_sts_endpoint`). Its credentials are not
/// tokens, so it answers no request of the token path; `awsCredentials(_:)` is its own use case.
public struct AWSFamily: TokenFamily {
    public init() {}
    public var configurationSection: (any ConfigurationSection.Type)? { AWSSettings.self }
    /// The hello's key of the STS a forwarded session's `aws-credential-process` asks.
    public static let stsEndpointSetting = "aws_sts_endpoint"
    public var forwardedSettingKeys: [String] { [Self.stsEndpointSetting] }
    public func forwardedSettings(_ configuration: SignInConfiguration) -> [String: String] { [Self.stsEndpointSetting: configuration.awsSTSEndpoint] }
    public func configuredChain(_ configuration: SignInConfiguration) -> [String] { [] }
    package func scopeRules(for request: TokenRequest, configuration: SignInConfiguration) -> ProviderRules? { nil }
    public func token(for request: TokenRequest, grant: any PersonGrant) throws(SignInError) -> IssuedToken? { nil }
}

/// AWS roles for async code, as SignInKit's `SignInClientProtocol` has it (which composes this): a stand-in gets `.unsupported`,
/// a `PersonGrant` (`SignInClient`) runs `awsCredentials(_:)` on a thread of its own, cancellable.
public protocol AWSRoleClient: Sendable {
    /// An AWS role's temporary credentials (default, for a stand-in: `.unsupported`).
    func awsRoleCredentials(_ request: AWSRoleRequest) async throws(SignInError) -> AWSCredentials
}

extension AWSRoleClient {
    public func awsRoleCredentials(_ request: AWSRoleRequest) async throws(SignInError) -> AWSCredentials {
        throw .unsupported(reason: "this stand-in for SignInClient gives no AWS credentials; implement awsRoleCredentials(_:)")
    }
}

extension AWSRoleClient where Self: PersonGrant {
    /// `awsCredentials(_:)` for async code, cancellable: a role's temporary credentials, bought at STS with the
    /// person's ID token and cached encrypted in the account's entry.
    public func awsRoleCredentials(_ request: AWSRoleRequest) async throws(SignInError) -> AWSCredentials {
        try await offPool("the STS request") { (_) throws(SignInError) -> AWSCredentials in try self.awsCredentials(request) }
    }
}
