import SignInKit
import FoundationEssentials

/// What an MCP client transport asks of the OAuth layer under it: the headers for each request to the server, and
/// what a 401 or 403 answer means. `APIAuthorizer` is one (the person's sign-in for the server, kept in signin's
/// store); a program may bring its own (a forwarded agent's tokens, a fixed token in a test).
public protocol MCPAuthorization: Sendable {
    /// The headers for one request with `method` to `url`: `Authorization`, and `DPoP` with a proof for a bound grant.
    func headers(method: String, url: URL) async throws(SignInError) -> [String: String]
    /// What the answer `status` with `wwwAuthenticate` means: `.retry` (send again with new headers) or `.done`.
    /// `afterRetry`: the answer is to a request sent again after a `.retry`.
    func decide(status: Int, wwwAuthenticate: String?, afterRetry: Bool) async throws(SignInError) -> AuthorizationDecision
    /// The headers for a request the transport makes of its own accord (the server's GET stream, the session's
    /// DELETE), with no person waiting on it: never a sign-in (a refresh is fine). Default: `headers(method:url:)`.
    func backgroundHeaders(method: String, url: URL) async throws(SignInError) -> [String: String]
}

extension MCPAuthorization {
    public func backgroundHeaders(method: String, url: URL) async throws(SignInError) -> [String: String] {
        try await headers(method: method, url: url)
    }
}

extension APIAuthorizer: MCPAuthorization {
    /// As `headers(method:url:)`, but a sign-in it would need is `.noPreviousSignIn` instead: a browser opens only
    /// for a request a person is waiting on.
    public func backgroundHeaders(method: String, url: URL) async throws(SignInError) -> [String: String] {
        try await headersWithoutSignIn(method: method, url: url)
    }
}
