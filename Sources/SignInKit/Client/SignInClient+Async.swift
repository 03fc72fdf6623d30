import SignInBase
import SignInProtocol
import SignInStorage
import SignInGrant
import SignInTransport
import FoundationEssentials

/// The token path for async code (the families' own, AWS roles and Google federation, are theirs): it runs its synchronous namesake on a thread
/// of its own (so the cooperative pool is never blocked by a network wait), and a cancelled task cancels it: a
/// request not yet sent is not sent, one on its way is cut (`.canceled`), but a token request whose answer carries
/// a rotated refresh token finishes and is saved first, as everywhere (`CriticalSection`).
extension SignInClient {
    /// `token(_:)` for async code, cancellable: the one token path (the kind, a service-account chain, an audience,
    /// federation, DPoP) with the answer's type (`IssuedToken.tokenType`: `Bearer` or `DPoP`).
    public func token(for request: TokenRequest) async throws(SignInError) -> IssuedToken {
        try await offPool("the token request") { (_) throws(SignInError) -> IssuedToken in try self.token(request) }
    }
}
