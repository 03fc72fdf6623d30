import SignInBase
import SignInProtocol

/// A provider family plugged into the one token path (`SignInClient.token(_:)`): it answers the requests it derives
/// from the person's grant (Google's service accounts and federation, say) and says what the configuration names
/// for it. The client asks each registered family (SignInKit's `TokenFamilies`) in turn and answers the rest itself;
/// what a new family takes is listed there, and whatever it adds to a request crosses the agent through its own
/// `agentQuery` and `readAgentQuery`. (Package-wide: a family is a room of this package.)
package protocol TokenFamily: Sendable {
    /// The configuration section this family reads, if any.
    var configurationSection: (any ConfigurationSection.Type)? { get }

    /// The keys of the settings a forwarded session's tools need of this family (endpoints), in the agent's hello.
    var forwardedSettingKeys: [String] { get }

    /// Those settings as `configuration` gives them, for the hello of a session forwarded with it.
    func forwardedSettings(_ configuration: SignInConfiguration) -> [String: String]

    /// The service-account chain the configuration names for a request whose principal is `.configured`; empty when
    /// this family's section names none.
    func configuredChain(_ configuration: SignInConfiguration) -> [String]

    /// Whose scope names `request`'s scopes are in, when this family decides it (a token for its own APIs); nil:
    /// the provider's.
    func scopeRules(for request: TokenRequest, configuration: SignInConfiguration) -> ProviderRules?

    /// The token for `request` when this family derives it (its principal already resolved), else nil: the
    /// person's own token, or the person's token for one API, which the client answers. Asked only of a request that
    /// names a service account or carries a family's parameters (`TokenRequest.familyParameters`).
    func token(for request: TokenRequest, grant: any PersonGrant) throws(SignInError) -> IssuedToken?

    /// The keys this family adds to a token request's query on the agent's wire (`agentQuery`), which the agent
    /// accepts besides its own.
    var agentQueryKeys: [String] { get }

    /// This family's part of `request` (`TokenRequest.familyParameters`) as query items for the agent's wire; empty
    /// when the request carries none of it.
    func agentQuery(_ request: TokenRequest) -> [(String, String)]

    /// Reads this family's part of a request from the agent's query into `request`; a message naming the key at
    /// fault when it is wrong, else nil.
    func readAgentQuery(_ query: [String: String], into request: inout TokenRequest) -> String?

    /// Whether this family takes `request` although it names no service account and carries no family parameter.
    func serves(_ request: TokenRequest, configuration: SignInConfiguration) -> Bool
}

extension TokenFamily {
    /// Whether this family takes `request` although it names no service account and carries no parameter of a
    /// family's (an MCP server's token that MCP's enterprise-managed authorization buys). Default: no.
    package func serves(_ request: TokenRequest, configuration: SignInConfiguration) -> Bool { false }

    /// A family whose requests carry nothing of their own across the agent.
    package var agentQueryKeys: [String] { [] }
    package func agentQuery(_ request: TokenRequest) -> [(String, String)] { [] }
    package func readAgentQuery(_ query: [String: String], into request: inout TokenRequest) -> String? { nil }
}
