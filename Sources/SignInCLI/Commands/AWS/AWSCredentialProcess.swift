import FoundationEssentials
import SignInKit

/// `signin aws-credential-process --role-arn ARN`: the `credential_process` of `~/.aws/config`.
struct AWSCredentialProcess: SignInCommand {
    /// Handed over as `signin token` is: at once for a forced refresh (unless a forwarded agent answers it).
    /// Whether the static half of the release build runs this to its end: not a forced refresh, which needs libcurl
    /// (unless a forwarded agent answers it).
    let startsStatic: Bool
    static let spec = CommandSpec(
        of: Self.self, options: RefreshChoice.options + AWSRoleOptions.options, summary: "AWS credential_process: a role's keys for your sign-in (STS AssumeRoleWithWebIdentity)",
        details: """
            Prints the JSON aws-cli and the AWS SDKs read from a credential_process (Version 1, AccessKeyId,
            SecretAccessKey, SessionToken, Expiration): the role's temporary credentials, bought at STS
            (aws_sts_endpoint, or aws_region's, or the global one) with your ID token, whose audience is this client
            ID. They are cached encrypted in the store until 15 minutes before they expire (AWS asks on every
            command), and parallel calls make one STS call. `signin aws configure` writes the profile that runs
            this. Over `signin ssh`, the laptop's agent gives the ID token and this machine asks STS.
            """,
        usageOverride: "signin aws-credential-process --role-arn ARN [--duration TIME] [--session-name NAME] [--force-refresh] [--account ACCOUNT] [--passphrase-fd N]",
        takesAccount: true, takesJSON: false)

    let role: AWSRoleOptions
    let forceRefresh: Bool

    init(_ a: Arguments, _ env: [String: String]) throws(UsageError) {
        forceRefresh = try RefreshChoice(a).forceRefresh
        role = try AWSRoleOptions(a)
        startsStatic = Freshness.startsStatic(forceRefresh: forceRefresh, a, env)
    }

    func run(_ r: CommandRun) throws -> ExitCode {
        if !startsStatic { r.handOver(Freshness.handOverReason) }
        if let agent = r.agent, let answered = try run(through: agent) { return answered }
        return try run(in: r.context())
    }

    func run(in c: Context) throws(SignInError) -> ExitCode {
        try answer(LocalTokens(c: c, chain: [], interactive: false), account: c.account).write(c.io)
    }

    func run(through agent: AgentTokens) throws(SignInError) -> ExitCode? { try answer(agent, account: agent.account).write(agent.io) }

    /// AWS's process-credential JSON for the role's credentials from `source`.
    func answer(_ source: some BridgeSource, account: String?) throws(SignInError) -> BridgeAnswer {
        let c = try source.awsCredentials(role.request(account: account, forceRefresh: forceRefresh))
        return BridgeAnswer(output: JSONText.object(["Version": .int(1), "AccessKeyId": .string(c.accessKeyID), "SecretAccessKey": .string(c.secretAccessKey),
                                                     "SessionToken": .string(c.sessionToken), "Expiration": .string(iso8601(c.expiration))]) + "\n")
    }
}
