import SignInBase
import SignInGrant
import SignInAWS

/// AWS's part of the agent's client end: the family's one rule, fed from the agent (the rest of `AgentClient` names no
/// family).
extension AgentClient {
    /// An AWS role's credentials on a machine reached with `signin ssh`: AWS's one rule with the person's ID token
    /// from the agent (the laptop's configuration decides nothing else here) and the STS the agent's hello names.
    /// Nothing is cached (there is no store here).
    public func awsCredentials(_ request: AWSRoleRequest, account: String?) throws(SignInError) -> AWSCredentials {
        try request.credentials(stsEndpoint: { () throws(SignInError) -> String in
            guard let endpoint = try greeting().familySettings[AWSFamily.stsEndpointSetting] else {
                throw .unsupported(reason: "the agent at \(socketPath) does not say which AWS STS to ask (the laptop's signin predates AWS roles: update it)")
            }
            return endpoint
        }) { (force) throws(SignInError) -> IssuedToken in
            var r = TokenRequest(kind: .id, minimumValidity: .seconds(60), forceRefresh: force, account: account)
            r.principal = .person
            return try token(r)
        }
    }
}
