import SignInBase

/// What a family's rule needs of a forwarded agent (SignInKit's `AgentClient`, on a machine reached with `signin
/// ssh`): the person's tokens as the agent answers them, and a setting the agent's hello names for the family. A
/// family writes its forwarded rule against this port (AWS's `awsCredentials(_:account:)`), so the agent's client
/// names no family.
package protocol ForwardedTokens: Sendable {
    /// The agent's socket, for messages.
    var socketPath: String { get }
    /// The answer to `request`, as the agent's laptop gives it.
    func token(_ request: TokenRequest, profile: String?) throws(SignInError) -> IssuedToken
    /// The setting `key` of the agent's hello (a family's endpoint), or nil when the agent names none.
    func familySetting(_ key: String) throws(SignInError) -> String?
}
