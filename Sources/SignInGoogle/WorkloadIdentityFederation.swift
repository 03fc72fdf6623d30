import SignInBase
import SignInTransport
import FoundationEssentials

/// Google Cloud workload or workforce identity federation from any OpenID provider: the person's ID token (its
/// audience this client) exchanged at Google's Security Token Service for a federated access token, as a pool
/// provider that trusts this issuer allows; with a service account, that token then buys the service account's.
public struct WorkloadIdentityFederation: Sendable, Equatable {
    /// The pool provider: `//iam.googleapis.com/projects/NUMBER/locations/global/workloadIdentityPools/POOL/
    /// providers/PROVIDER`, or for a workforce pool `//iam.googleapis.com/locations/global/workforcePools/POOL/
    /// providers/PROVIDER`.
    public var audience: String
    /// A workforce pool's user project (billing and quota), `workforce_pool_user_project`; nil for workload pools.
    public var userProject: String?
    /// Google's STS token endpoint (`google_sts_endpoint`, default `https://sts.googleapis.com/v1/token`).
    public var stsEndpoint: String

    public static let defaultSTSEndpoint = "https://sts.googleapis.com/v1/token"

    public init(audience: String, userProject: String? = nil, stsEndpoint: String = WorkloadIdentityFederation.defaultSTSEndpoint) {
        self.audience = audience
        self.userProject = userProject
        self.stsEndpoint = stsEndpoint
    }

    /// Whether `audience` names a pool provider as Google writes it.
    public static func isAudience(_ s: String) -> Bool {
        guard s.hasPrefix("//iam.googleapis.com/"), s.count <= 512, !s.contains(where: { $0.isWhitespace || $0.isNewline }) else { return false }
        return s.contains("/workloadIdentityPools/") || s.contains("/workforcePools/")
    }

    /// Whether the pool is a workforce pool (people), which needs a user project.
    public var isWorkforce: Bool { audience.contains("/workforcePools/") }

    package static let endpointName = "Google Security Token Service"
}
