import FoundationEssentials
import SignInKit

/// `signin google external-account --audience POOL_PROVIDER`: google-auth's `external_account` file for signin.
struct GoogleCommand: SignInCommand {
    static let audienceOption = OptionSpec("--audience", value: "AUDIENCE", "The pool provider: //iam.googleapis.com/.../workloadIdentityPools/POOL/providers/P (or .../workforcePools/...)")
    static let outputOption = OptionSpec("--output", short: "-o", value: "FILE", "Write the file there (mode 0600) instead of printing it")
    static let serviceAccountOption = OptionSpec("--service-account", value: "EMAIL", "Impersonate this service account with the federated token")
    static let userProjectOption = OptionSpec("--workforce-pool-user-project", value: "PROJECT", "A workforce pool's user project (needed for workforce pools)")
    static let spec = CommandSpec(
        of: Self.self, options: [GoogleCommand.audienceOption, GoogleCommand.outputOption, GoogleCommand.serviceAccountOption, GoogleCommand.userProjectOption, .config, .profile, .account], summary: "Write a Google external_account file that gets its token from signin: `signin google external-account`",
        details: """
            `signin google external-account --audience POOL_PROVIDER` writes the configuration google-auth, gcloud and
            every Google client library read for workload or workforce identity federation (as gcloud iam
            workload-identity-pools create-cred-config and create-login-config write it): the subject token is your
            ID token from `signin google-executable-source`, exchanged at Google's STS (google_sts_endpoint) for the
            pool provider; with --service-account, that service account's token is minted with it. Use it with
            GOOGLE_APPLICATION_CREDENTIALS=FILE and GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES=1, or
            `gcloud auth login --cred-file=FILE`. With google_federation_audience in the configuration, the metadata
            server serves the same tokens and no file is needed.
            """,
        usageOverride: "signin google external-account --audience POOL_PROVIDER [--output FILE] [--service-account EMAIL] [--workforce-pool-user-project PROJECT]",
        positionalWords: ["external-account"], takesAccount: true, takesJSON: false, takesArguments: true)

    let audience: String
    let output: String?
    let serviceAccount: String?
    let userProject: String?
    /// The options that chose signin's configuration and account, carried into the file's command (`-c FILE` in the
    /// configuration folder as `--profile NAME`, found when the command runs: reading the arguments looks nowhere).
    let selection: [String]

    init(_ a: Arguments, _ env: [String: String]) throws(UsageError) {
        let audience = a.value(Self.audienceOption)
        output = a.value(Self.outputOption).map(ProcessEnvironment.absolute)
        serviceAccount = a.value(Self.serviceAccountOption)
        userProject = a.value(Self.userProjectOption)
        selection = a.selectionArguments
        guard a.positional == ["external-account"] else { throw UsageError("usage: signin google external-account --audience POOL_PROVIDER [--output FILE]") }
        guard let audience else { throw UsageError("--audience POOL_PROVIDER is needed (//iam.googleapis.com/.../providers/PROVIDER)") }
        guard WorkloadIdentityFederation.isAudience(audience) else {
            throw UsageError("--audience \"\(audience.withoutControlCharacters)\" is not a pool provider (//iam.googleapis.com/projects/NUMBER/locations/global/workloadIdentityPools/POOL/providers/PROVIDER, or .../workforcePools/POOL/providers/PROVIDER)")
        }
        self.audience = audience
        if let sa = serviceAccount, !ServiceAccounts.isEmail(sa) { throw UsageError("--service-account \"\(sa.withoutControlCharacters)\" is not a service account's e-mail") }
        if audience.contains("/workforcePools/") && userProject == nil { throw UsageError("a workforce pool needs --workforce-pool-user-project PROJECT (the project that pays for its use)") }
    }

    /// `-c PATH` of a file in the configuration folder, as `--profile NAME` (or nothing, for the default one): a
    /// command line with no path of the configuration's in it.
    static func byName(_ args: [String], _ env: [String: String]) -> [String] {
        guard let i = args.firstIndex(of: "-c"), i + 1 < args.count else { return args }
        let path = args[i + 1]
        let folder = SignInConfiguration.directory(environment: env) + "/"
        guard path.hasPrefix(folder), path.hasSuffix(".json") else { return args }
        let name = String(path.dropFirst(folder.count).dropLast(".json".count))
        guard SignInConfiguration.isValidProfileName(name) else { return args }
        var out = args
        out.replaceSubrange(i...(i + 1), with: name == "config" ? [] : ["--profile", name])
        return out
    }

    /// The `command` google-auth, gcloud and Go's golang.org/x/oauth2 all read alike: Python splits it as a shell
    /// would (shlex), Go on white space with no quoting, so no word may need quotes. A path that would is refused
    /// with what to do, rather than written into a file one of them cannot run.
    static func executableCommand(_ args: [String]) throws(SignInError) -> String {
        if let odd = args.first(where: { AWSConfigFile.commandLine([$0]) != $0 }) {
            throw .unsupported(reason: "the external_account file's command would hold \"\(odd.withoutControlCharacters)\", which Go's client libraries split on white space (they have no quoting); put signin and its configuration in folders whose names have no space or quote (--profile NAME for a configuration in \(SignInConfiguration.directory(environment: ProcessEnvironment.current)))")
        }
        return args.joined(separator: " ")
    }

    func run(_ r: CommandRun) throws -> ExitCode {
        if let agent = r.agent, let answered = try run(through: agent) { return answered }
        return try run(in: r.context())
    }

    func run(in c: Context) throws(SignInError) -> ExitCode {
        try write(sts: c.client.configuration.googleSTSEndpoint, iam: c.client.configuration.iamCredentialsEndpoint, c.environment, c.io)
    }

    /// Over `signin ssh` the file is for this machine's tools, with the laptop's endpoints; the ID token comes
    /// through the agent.
    func run(through agent: AgentTokens) throws(SignInError) -> ExitCode? {
        let hello = try agent.hello()
        return try write(sts: hello.familySettings[GoogleCloudFamily.stsEndpointSetting] ?? WorkloadIdentityFederation.defaultSTSEndpoint,
                         iam: hello.familySettings[GoogleCloudFamily.iamCredentialsEndpointSetting] ?? GoogleCloudSettings().iamCredentialsEndpoint,
                         ProcessEnvironment.current, agent.io)
    }

    private func write(sts: String, iam: String, _ env: [String: String], _ io: IOStreams) throws(SignInError) -> ExitCode {
        guard let me = DynamicSibling.frontPath else { throw .system(reason: "cannot find this program's own path (/proc/self/exe)") }
        var o: [String: JSONValueOut] = [
            "type": .string("external_account"), "audience": .string(audience), "subject_token_type": .string(GoogleExecutableSource.tokenType),
            "token_url": .string(sts),
            "credential_source": .object(["executable": .object(["command": .string(try Self.executableCommand([me, GoogleExecutableSource.name] + Self.byName(selection, env))),
                                                                 "timeout_millis": .int(30_000)])]),
        ]
        if let serviceAccount {
            var base = iam
            while base.hasSuffix("/") { base.removeLast() }
            o["service_account_impersonation_url"] = .string(base + "/v1/projects/-/serviceAccounts/\(serviceAccount):generateAccessToken")
        }
        if let userProject { o["workforce_pool_user_project"] = .string(userProject) }
        let text = JSONText.object(o)
        guard let output else {
            io.out(text)
            return .success
        }
        try TextFiles.write(text + "\n", to: output)
        io.err("signin: wrote \(output). Use it with GOOGLE_APPLICATION_CREDENTIALS=\(output) GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES=1, or `gcloud auth login --cred-file=\(output)`.")
        return .success
    }
}
