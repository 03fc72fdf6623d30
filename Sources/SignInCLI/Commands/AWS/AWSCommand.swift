import FoundationEssentials
import SignInKit

#if canImport(Glibc)
import Glibc
#endif

/// `signin aws configure --aws-profile P --role-arn ARN`: an aws-cli profile whose credentials come from signin.
struct AWSCommand: SignInCommand {
    static let awsProfile = OptionSpec("--aws-profile", value: "NAME", "The aws-cli profile to write (`aws --profile NAME`; default: default)")
    static let spec = CommandSpec(
        of: Self.self, options: [AWSCommand.awsProfile] + AWSRoleOptions.options + [.config, .profile, .account, .json], summary: "Write an aws-cli profile that gets a role's keys from signin: `signin aws configure`",
        details: """
            `signin aws configure --role-arn ARN [--aws-profile NAME]` sets credential_process in that profile of
            ~/.aws/config ($AWS_CONFIG_FILE) to this signin's `aws-credential-process` with the same role, duration,
            session name, configuration and account, and region to aws_region when the profile has none. Other
            profiles, keys and comments stay as they are; the file is replaced atomically. (--aws-profile, because
            --profile chooses signin's own configuration, as in every command.)
            """,
        usageOverride: "signin aws configure --role-arn ARN [--aws-profile NAME] [--duration TIME] [--session-name NAME] [--account ACCOUNT]",
        positionalWords: ["configure"], takesAccount: true, takesArguments: true)

    let role: AWSRoleOptions
    let profile: String
    /// The options that chose signin's configuration and account, carried into the profile's command line.
    let carried: [String]
    let json: Bool
    /// `--account`, carried into the profile's command line.
    let account: String?

    init(_ a: Arguments, _ env: [String: String]) throws(UsageError) {
        profile = a.value(Self.awsProfile) ?? "default"
        let role = Result { () throws(UsageError) in try AWSRoleOptions(a) }
        carried = a.selectionArguments
        account = a.value(.account)
        json = a.has(.json)
        guard a.positional == ["configure"] else { throw UsageError("usage: signin aws configure --role-arn ARN [--aws-profile NAME]") }
        self.role = try role.get()
        guard AWSConfigFile.isProfileName(profile) else { throw UsageError("--aws-profile \"\(profile.withoutControlCharacters)\" is not a profile name (letters, digits and _-.@+)") }
    }

    func run(_ r: CommandRun) throws -> ExitCode {
        if let agent = r.agent, let answered = try run(through: agent) { return answered }
        return try run(in: r.context())
    }

    func run(in c: Context) throws(SignInError) -> ExitCode {
        let io = c.io
        // The account the profile will name must be one of this store's (one, not several) before it is written.
        if let account { _ = try c.client.signedInUser(account: account) }
        return try write(environment: c.environment, region: c.client.configuration.awsRegion, io)
    }

    /// Over `signin ssh` the profile is written on this machine, where aws-cli runs; the keys come through the agent.
    func run(through agent: AgentTokens) throws(SignInError) -> ExitCode? {
        try write(environment: ProcessEnvironment.current, region: nil, agent.io)
    }

    private func write(environment: [String: String], region: String?, _ io: IOStreams) throws(SignInError) -> ExitCode {
        guard let me = DynamicSibling.frontPath else { throw .system(reason: "cannot find this program's own path (/proc/self/exe)") }
        var args = [me, AWSCredentialProcess.name, "--role-arn", role.roleARN]
        if role.durationSeconds != 3600 { args += ["--duration", String(role.durationSeconds)] }
        if let s = role.sessionName { args += ["--session-name", s] }
        let command = AWSConfigFile.commandLine(args + carried)
        let path = AWSConfigFile.path(environment)
        var file = AWSConfigFile(try TextFiles.read(path) ?? "")
        let replaced = try file.set("credential_process", command, profile: profile)
        if let region { try file.set("region", region, profile: profile, onlyIfAbsent: true) }
        let mode: mode_t
        if case .success(let st) = Posix.status(of: path) { mode = st.permissions & 0o777 } else { mode = 0o600 }
        try TextFiles.write(file.text, to: path, mode: mode)
        if json {
            io.out(JSONText.object(["file": .string(path), "aws_profile": .string(profile), "credential_process": .string(command), "replaced": .bool(replaced != nil)]))
        } else {
            let use = profile == "default" ? "aws sts get-caller-identity" : "aws sts get-caller-identity --profile \(profile)"
            io.out("\(replaced == nil ? "Added" : "Updated") the profile \(profile) in \(path): aws-cli gets \(role.roleARN)'s keys from signin.\nTry: \(use)")
        }
        return .success
    }
}
