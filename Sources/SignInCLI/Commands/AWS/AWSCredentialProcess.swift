import FoundationEssentials
@_spi(CLI) import SignInKit

/// `signin aws-credential-process --role-arn ARN`: the `credential_process` of `~/.aws/config`.
struct AWSCredentialProcess: SignInCommand {
    static var name: String { "aws-credential-process" }
    static let spec = CommandSpec(
        name: name, summary: "AWS credential_process: a role's keys for your sign-in (STS AssumeRoleWithWebIdentity)",
        details: """
            Prints the JSON aws-cli and the AWS SDKs read from a credential_process (Version 1, AccessKeyId,
            SecretAccessKey, SessionToken, Expiration): the role's temporary credentials, bought at STS
            (aws_sts_endpoint, or aws_region's, or the global one) with your ID token, whose audience is this client
            ID. They are cached encrypted in the store until 15 minutes before they expire (AWS asks on every
            command), and parallel calls make one STS call. `signin aws configure` writes the profile that runs
            this. Over `signin ssh`, the laptop's agent gives the ID token and this machine asks STS.
            """,
        ownOptions: AWSRoleOptions.all + [.forceRefresh], takesAccount: true, takesJSON: false)

    let role: AWSRoleOptions
    let forceRefresh: Bool

    init(_ a: Arguments, _ env: [String: String]) throws(UsageError) {
        role = try AWSRoleOptions(a)
        forceRefresh = a.has(.forceRefresh)
        try noPositional(a, Self.spec)
    }

    func run(_ c: Context) throws(SignInError) -> ExitCode {
        let r = role.request(account: c.account, forceRefresh: forceRefresh)
        print(try LocalTokens(c: c, chain: [], interactive: false).awsCredentials(r))
        return .success
    }

    func run(agent: AgentTokens) throws(SignInError) -> ExitCode? {
        print(try agent.awsCredentials(role.request(account: agent.account, forceRefresh: forceRefresh)))
        return .success
    }

    /// AWS's process-credential JSON.
    private func print(_ c: AWSCredentials) {
        out(JSONText.object(["Version": .int(1), "AccessKeyId": .string(c.accessKeyID), "SecretAccessKey": .string(c.secretAccessKey),
                             "SessionToken": .string(c.sessionToken), "Expiration": .string(iso8601(c.expiration))]))
    }
}
