/// What an API's answer means for the request that got it, as an OAuth layer under an HTTP client says
/// (`APIAuthorizer.decide`, `MCPAuthorization.decide`).
public enum AuthorizationDecision: Sendable, Equatable {
    /// Take the answer as it is.
    case done
    /// Send the request again with new headers (a refresh or a sign-in happened).
    case retry
}
