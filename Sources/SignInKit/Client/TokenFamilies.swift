import SignInProtocol
import SignInGrant
import SignInGoogle
import SignInAWS
import SignInEnterprise

/// The provider families the client composes: each a target of its own, plugged into the one token path
/// (`TokenFamily`), the configuration (its section) and the agent's wire (its part of a request). What a new family
/// takes: its target in Package.swift (depending on SignInGrant), one line here, and SignInKit's dependency on it
/// with its `@_exported import` (Exports.swift); a family with an async API of its own for programs adds its protocol
/// to `SignInClientProtocol` below, as Google's `GoogleCloudClient` and AWS's `AWSRoleClient` are (and the CLI's
/// commands for it, if any, are files of their own in SignInCLI).
enum TokenFamilies {
    static let all: [any TokenFamily] = [
        GoogleCloudFamily(),
        AWSFamily(),
        EnterpriseFamily(),
    ]

    /// Every family's configuration section, which `SignInConfiguration.parse(_:sourcePath:)` reads.
    static let configurationSections: [any ConfigurationSection.Type] = all.compactMap(\.configurationSection)

    /// Every family's keys in the agent's hello (`AgentProtocol.Hello.familySettings`).
    static let forwardedSettingKeys: [String] = all.flatMap(\.forwardedSettingKeys)
}

/// What a program's code needs of a `SignInClient`, so that its own tests can stand in for one: write the code
/// against `some SignInClientProtocol` (or `any`), pass a `SignInClient` in the program and a fake in tests. It is the
/// client's own part (`SignInClientCore`: restore, sign in, accounts, the token path) with each built-in provider
/// family's (Google's federation, `GoogleCloudClient`; AWS's roles, `AWSRoleClient`), composed here, where the
/// families are; a stand-in gets the families' `.unsupported` defaults. Code that needs no family can ask for
/// `SignInClientCore` alone.
public typealias SignInClientProtocol = SignInClientCore & GoogleCloudClient & AWSRoleClient

extension SignInClient: SignInClientProtocol {}
