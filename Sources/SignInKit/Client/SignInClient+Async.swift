import SignInBase
import SignInProtocol
import SignInStorage
import SignInTransport
import FoundationEssentials

/// The token path, AWS roles and Google federation for async code: each runs its synchronous namesake on a thread
/// of its own (so the cooperative pool is never blocked by a network wait), and a cancelled task cancels it: a
/// request not yet sent is not sent, one on its way is cut (`.canceled`), but a token request whose answer carries
/// a rotated refresh token finishes and is saved first, as everywhere (`CriticalSection`).
extension SignInClient {
    /// `token(_:)` for async code, cancellable: the one token path (the kind, a service-account chain, an audience,
    /// federation, DPoP) with the answer's type (`IssuedToken.tokenType`: `Bearer` or `DPoP`).
    public func token(for request: TokenRequest) async throws(SignInError) -> IssuedToken {
        try await offPool("the token request") { (_) throws(SignInError) -> IssuedToken in try self.token(request) }
    }

    /// `awsCredentials(_:)` for async code, cancellable: a role's temporary credentials, bought at STS with the
    /// person's ID token and cached encrypted in the account's entry.
    public func awsRoleCredentials(_ request: AWSRoleRequest) async throws(SignInError) -> AWSCredentials {
        try await offPool("the STS request") { (_) throws(SignInError) -> AWSCredentials in try self.awsCredentials(request) }
    }

    /// `federatedAccessToken(_:scopes:chain:account:minimumValidity:forceRefresh:)` for async code, cancellable:
    /// a Google Cloud access token through workload or workforce identity federation (a service account's when
    /// `chain` names one).
    public func federatedGoogleAccessToken(_ federation: WorkloadIdentityFederation, scopes: [String] = [SignInClient.cloudPlatformScope], chain: [String] = [],
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
