import SignInProtocol
import SignInGrant
import SignInGoogle
import SignInAWS

/// The provider families the client composes: each a target of its own, plugged into the one token path
/// (`TokenFamily`) and the configuration (its section). A new family is its target and one line here.
enum TokenFamilies {
    static let all: [any TokenFamily] = [
        GoogleCloudFamily(),
        AWSFamily(),
    ]

    /// Every family's configuration section, which `SignInConfiguration.parse(_:sourcePath:)` reads.
    static let configurationSections: [any ConfigurationSection.Type] = all.compactMap(\.configurationSection)

    /// Every family's keys in the agent's hello (`AgentProtocol.Hello.familySettings`).
    static let forwardedSettingKeys: [String] = all.flatMap(\.forwardedSettingKeys)
}
