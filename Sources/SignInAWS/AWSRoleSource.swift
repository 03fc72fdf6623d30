import SignInBase
import SignInProtocol
import SignInStorage
import SignInTransport
import SignInGrant
import FoundationEssentials

/// An AWS role's credentials bought with the signed-in person's ID token: one rule, whichever side holds the grant.
/// `SignInClient.awsCredentials` runs it with this machine's ID token, cached in the entry under the account's lock;
/// `AgentClient.awsCredentials` runs it on a machine reached with `signin ssh`, with the ID token the laptop's agent
/// gives (never the grant) and nothing cached (there is no store there).
///
/// 1. A request STS would refuse (not a role ARN, a bad session name, a duration outside 15 min to 12 h):
///    `.unsupported`, before any network.
/// 2. The session name: the request's, else the person's name made into one (`AWSRoleRequest.sessionName(from:)`).
/// 3. STS `AssumeRoleWithWebIdentity` with the ID token. STS finding the ID token expired (`ExpiredTokenException`):
///    the ID token is refreshed once (forced) and STS asked again; any other refusal is a `.providerError` naming
///    the role and what to fix.
package enum AWSRoleSource {
    /// Step 1.
    package static func check(_ request: AWSRoleRequest) throws(SignInError) {
        if let problem = request.problem { throw .unsupported(reason: problem) }
    }

    /// Step 2: the role session's name; `personName` (what the person is known as) is asked only when the request
    /// names none.
    package static func sessionName(_ request: AWSRoleRequest, personName: () throws(SignInError) -> String) throws(SignInError) -> String {
        if let named = request.sessionName { return named }
        return AWSRoleRequest.sessionName(from: try personName())
    }

    /// Step 3's retry rule: the STS refusal that a refreshed ID token answers.
    package static func refreshesIDToken(_ code: String) -> Bool { code == "ExpiredTokenException" }

    /// Steps 1 to 3 with no cache: `sts()` gives the STS to ask (asked after step 1), and `idToken(force)` the
    /// person's ID token (refreshed when `force`).
    package static func credentials(_ request: AWSRoleRequest, sts makeSTS: () throws(SignInError) -> AWSSecurityTokenService,
                                    idToken: (Bool) throws(SignInError) -> IssuedToken) throws(SignInError) -> AWSCredentials {
        try check(request)
        let sts = try makeSTS()
        func attempt(force: Bool) throws(SignInError) -> AWSCredentials {
            let id = try idToken(force)
            return try sts.assumeRole(request.roleARN, idToken: id.token.value, sessionName: sessionName(request) { id.name },
                                      duration: request.duration)
        }
        do throws(SignInError) {
            return try attempt(force: request.forceRefresh)
        } catch .providerError(let endpoint, let code, let detail) {
            guard refreshesIDToken(code) else { throw .providerError(endpoint: endpoint, code: code, detail: detail) }
            return try attempt(force: true)
        }
    }
}

extension AWSRoleRequest {
    /// This role's credentials by `AWSRoleSource`'s rule with no cache, asking the STS `stsEndpoint()` names (an
    /// endpoint of the caller's, such as a forwarded agent's hello) with the ID token `idToken(force)` gives.
    package func credentials(stsEndpoint: () throws(SignInError) -> String, idToken: (Bool) throws(SignInError) -> IssuedToken) throws(SignInError) -> AWSCredentials {
        try AWSRoleSource.credentials(self, sts: { () throws(SignInError) -> AWSSecurityTokenService in
            try AWSSecurityTokenService(endpoint: try stsEndpoint())
        }, idToken: idToken)
    }
}
