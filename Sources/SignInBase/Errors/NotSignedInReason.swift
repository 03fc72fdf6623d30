import FoundationEssentials

/// Why there is no signed-in user to use, as a case a program can switch on (`SignInError.noPreviousSignIn`).
/// Each is something signing in again (or choosing an account) fixes.
public enum NotSignedInReason: Sendable, Equatable, CustomStringConvertible {
    /// Nothing is stored for this issuer and client (or, `what`, for this operation: "to revoke").
    case nothingStored(issuer: String)
    /// Accounts are stored (`stored`: their e-mails or subs), but none is current: choose one.
    case noCurrentAccount(stored: [String])
    /// The provider refused the stored grant on this date (revoked, expired, or a reused refresh token).
    case grantEnded(on: Date)
    /// The provider issued no refresh token, so an expired access token cannot be renewed.
    case noRefreshToken
    /// The stored sign-in holds no token of this kind.
    case noToken(TokenKind)
    /// A refresh brought no new ID token (the provider issues one only at sign-in); the stored one expires then.
    case noNewIDToken(storedExpiry: Date?)
    /// The account was signed out while this call waited for it.
    case signedOutMeanwhile
    /// The credential store at this path has no key yet (nothing was ever stored there).
    case noStore(path: String)
    /// `SIGNIN_AGENT_SOCK` names an agent's socket that cannot be used (`reason`: gone, not answering, not yours).
    case agentUnavailable(socket: String, reason: String)
    /// The agent refused: the account or the configuration is not forwarded, the session expired, the person said no.
    case agentRefused(reason: String)

    /// The reason in words, for a person.
    public var description: String {
        switch self {
        case .nothingStored(let issuer): return issuer.hasPrefix("the API ") ? "no sign-in for \(issuer)" : "nothing stored for \(issuer) and this client"
        case .noCurrentAccount(let stored):
            return "no account is current (\(stored.count) stored: \(stored.joined(separator: ", ")))"
        case .grantEnded(let date):
            return "the provider ended this sign-in on \(date.formatted(.iso8601)) (it no longer accepts the stored grant); sign in again"
        case .noRefreshToken: return "cannot refresh: no refresh token is stored (the provider issued none); sign in again"
        case .noToken(let kind): return "no \(kind == .id ? "ID" : "access") token stored"
        case .noNewIDToken(let expiry):
            return "the provider sent no new ID token with the refresh (it issues one only at sign-in), and the stored one expires \(expiry.map { $0.formatted(.iso8601) } ?? "at an unknown time"); sign in again for a fresh one"
        case .signedOutMeanwhile: return "signed out meanwhile"
        case .noStore(let path): return "the store \(path) has no key yet; it is created at the first sign-in"
        case .agentUnavailable(let socket, let reason): return "the agent's socket \(socket) cannot be used: \(reason)"
        case .agentRefused(let reason): return "the agent refused: \(reason)"
        }
    }
}
