/// Which token a caller needs fresh.
public enum TokenKind: Sendable {
    /// The OAuth access token, for APIs.
    case access
    /// The OpenID Connect ID token, for services that take one (Kubernetes' OIDC authenticator, Cloud Run).
    case id
}
