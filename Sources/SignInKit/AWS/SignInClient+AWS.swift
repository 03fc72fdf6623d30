import SignInBase
import SignInProtocol
import SignInStorage
import SignInTransport
import FoundationEssentials

/// AWS roles from any OpenID provider: the signed-in person's ID token (its audience this client) exchanged at
/// STS for a role's temporary credentials, as aws-cli's `credential_process` takes them.
extension SignInClient {
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
        let key = "aws|" + [request.roleARN, session, String(seconds), sts.endpoint].joined(separator: " ")
        // A forced refresh asks STS: nothing cached is fresh enough for that.
        let validity = request.forceRefresh ? Duration.seconds(2 * 43_200) : request.effectiveMinimumValidity
        let t = try cachedCredential(key: key, account: request.account, minimumValidity: validity, buyingWith: .id,
                                     retryWhen: AWSRoleSource.refreshesIDToken) { idToken throws(SignInError) in
            let c = try sts.assumeRole(request.roleARN, idToken: idToken, sessionName: session, duration: request.duration)
            return SignInToken(value: c.cacheText, expirationDate: c.expiration)
        }
        guard let expiry = t.expirationDate, let c = AWSCredentials(cacheText: t.value, expiration: expiry) else {
            throw .storeUnreadable(path: "the credential store", reason: "the cached AWS credentials of \(request.roleARN) cannot be read")
        }
        return c
    }
}
