import SignInBase
import SignInGrant

/// AWS's part of a forwarded session: the family's one rule, fed from the agent.
extension ForwardedTokens {
    /// An AWS role's credentials on a machine reached with `signin ssh`: AWS's one rule with the person's ID token
    /// from the agent (the laptop's configuration decides nothing else here) and the STS the agent's hello names.
    /// Nothing is cached (there is no store here).
    package func awsCredentials(_ request: AWSRoleRequest, account: String?) throws(SignInError) -> AWSCredentials {
        try request.credentials(stsEndpoint: { () throws(SignInError) -> String in
            guard let endpoint = try familySetting(AWSFamily.stsEndpointSetting) else {
                throw .unsupported(reason: "the agent at \(socketPath) does not say which AWS STS to ask (the laptop's signin predates AWS roles: update it)")
            }
            return endpoint
        }) { (force) throws(SignInError) -> IssuedToken in
            var r = TokenRequest(kind: .id, minimumValidity: .seconds(60), forceRefresh: force, account: account)
            r.principal = .person
            return try token(r, profile: nil)
        }
    }
}
