import SignInBase
import SignInProtocol
import SignInStorage
import SignInGrant
import SignInTransport

/// A way of obtaining a person's tokens from the provider, one type per grant: the authorization code grant through
/// the browser and the loopback listener (`LoopbackAuthorization`), or the device authorization grant with a code
/// on another device (`DeviceGrant`). A sign-in runs either the same way (`SignInClient.signInBlocking`):
///
/// 1. `awaitAnswer`: wait for the person (cancellable; nothing is spent yet);
/// 2. `exchange`: turn the answer into tokens, inside the critical section that also saves them (a one-use code or
///    a rotated token is never spent without the result being kept);
/// 3. `finish`: tell the person's browser how it ended, where there is one.
protocol AuthorizationGrant {
    associatedtype Answer
    func awaitAnswer(canceller: Canceller, emit: @escaping @Sendable (SignInEvent) -> Void) throws(SignInError) -> Answer
    /// The tokens, and the nonce the ID token must carry (nil where the grant sent none).
    func exchange(_ answer: Answer) throws(SignInError) -> (response: TokenResponse, nonce: String?)
    func finish(_ page: ResultPage)
}

/// The device authorization grant (RFC 8628) as an `AuthorizationGrant`: the answer is the token response itself,
/// which arrives by polling once the person approves on the other device.
struct DeviceGrant: AuthorizationGrant {
    let device: DeviceAuthorization
    let timeoutSeconds: Int

    func awaitAnswer(canceller: Canceller, emit: @escaping @Sendable (SignInEvent) -> Void) throws(SignInError) -> TokenResponse {
        try device.run(canceller: canceller, timeout: timeoutSeconds) { emit(.deviceCode($0)) }
    }

    func exchange(_ answer: TokenResponse) throws(SignInError) -> (response: TokenResponse, nonce: String?) { (answer, nil) }

    func finish(_ page: ResultPage) {}
}
