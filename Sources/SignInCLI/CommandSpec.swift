import SignInKit

/// What a command declares, as swift-argument-parser's `CommandConfiguration` with the command's options: its name,
/// its help, the options and words it takes, and what it needs. Help, the manual page, the completions and the
/// argument splitter read these, from `Commands.all`.
struct CommandSpec: Sendable {
    /// The command this declares.
    let command: any SignInCommand.Type
    let name: String
    /// The command's own options, stated as data beside the initialiser that reads them (an option group's as
    /// `Group.options`), as swift-argument-parser's `@Option`s are: help, the manual page, the completions and the
    /// parser read this list, and reading an option it does not hold is caught in debug builds (`Arguments`).
    let declared: [OptionSpec]
    /// One line, for the list of commands.
    let summary: String
    /// The paragraph of `signin help NAME` and the manual page.
    let details: String
    /// What follows the options in the usage line: ` ACCOUNT`, ` [--] COMMAND [ARGS...]`.
    var usageTail: String = ""
    /// The whole usage line, where the generated one would not say it right.
    var usageOverride: String?
    /// Words completion offers after the command (`get store erase`).
    var positionalWords: [String] = []
    /// Reads a configuration (and so takes `--config`, `--profile` and `--passphrase-fd`).
    var readsConfiguration = true
    /// Works on one account, named by `--account` or `$SIGNIN_ACCOUNT`.
    var takesAccount = false
    /// Has a `--json` form.
    var takesJSON = true
    /// Takes words beside its options (`use ACCOUNT`, `mcp URL`, `exec COMMAND`); a command that does not refuses
    /// any, by name, as its command line is read.
    var takesArguments = false
    /// Everything after the first non-option argument is a command to run.
    var takesCommand = false
    /// An option it does not know starts the command's own arguments (`signin ssh -p 2222 host`: ssh's).
    var passesUnknownOptions = false
    /// Other names the binary may be run under that mean this command (`docker-credential-signin`, a link).
    var programNames: [String] = []

    init(of command: any SignInCommand.Type, options: [OptionSpec], summary: String, details: String, usageTail: String = "", usageOverride: String? = nil, positionalWords: [String] = [], readsConfiguration: Bool = true,
         takesAccount: Bool = false, takesJSON: Bool = true, takesArguments: Bool = false, takesCommand: Bool = false, passesUnknownOptions: Bool = false,
         programNames: [String] = []) {
        self.command = command
        self.declared = options
        self.name = command.name
        self.summary = summary
        self.details = details
        self.usageTail = usageTail
        self.usageOverride = usageOverride
        self.positionalWords = positionalWords
        self.readsConfiguration = readsConfiguration
        self.takesAccount = takesAccount
        self.takesJSON = takesJSON
        self.takesArguments = takesArguments
        self.takesCommand = takesCommand
        self.passesUnknownOptions = passesUnknownOptions
        self.programNames = programNames
    }

    /// The options every command that says so takes (`takesAccount`, `readsConfiguration`, `takesJSON`), in the order
    /// help shows them after the command's own.
    var sharedOptions: [OptionSpec] {
        (takesAccount ? [.account] : []) + (readsConfiguration ? [.config, .profile, .passphraseFD] : []) + (takesJSON ? [.json] : [])
    }

    /// Every option the command accepts, as help lists them: its own, in the order declared, then the shared ones and
    /// `--help`.
    var options: [OptionSpec] {
        let shared = sharedOptions
        return declared.filter { !shared.contains($0) && $0 != .help } + shared + [.help]
    }

    /// The same options for the parser, which only looks one up (a shared one the command also lists is there
    /// twice): nothing sorted on every run.
    var accepted: [OptionSpec] { declared + sharedOptions + [.help] }

    var usage: String {
        if let usageOverride { return usageOverride }
        let opts = options.filter { $0 != .help && $0 != .config && $0 != .profile && $0 != .json }.map { "[\($0.synopsis)]" }.joined(separator: " ")
        return "signin \(name)" + (opts.isEmpty ? "" : " " + opts) + usageTail
    }
}

/// One `signin` command: its declaration, an initialiser that reads and checks its arguments into typed fields
/// (swift-argument-parser's `validate()`: a wrong argument is a `UsageError` before anything runs), and its run, which
/// builds what it needs from the run (`CommandRun`: a forwarded agent, a client, the session), as argument-parser's
/// `run()` does. Nothing else is asked of a command: no pipeline decides for it.
protocol SignInCommand: SendableMetatype {
    /// The command's name (also `spec.name`), as `Commands.entries` gives it: the list names the commands, so that
    /// finding the one a run asks for reads no command's file but its own.
    static var name: String { get }
    static var spec: CommandSpec { get }
    init(_ a: Arguments, _ env: [String: String]) throws(UsageError)
    /// Runs the command. A `SignInError` is rendered by the command line (its message, the advice, the exit code); a
    /// `UsageError` as a usage error.
    func run(_ r: CommandRun) throws -> ExitCode
}

extension SignInCommand {
    static var name: String { Commands.name(of: self) }
}

/// The list of commands: help, the manual page, the completions and `CLI.split` read it. Adding a command is a new
/// file and one line here.
enum Commands {
    /// One command in the list, its name and its type (a named struct, not a bare metatype: its array's type
    /// metadata is direct, where an array of existential metatypes is built by demangling its name at run time on
    /// every start).
    struct Entry {
        let name: String
        let type: any SignInCommand.Type
        /// On the cached path: the release build's static half starts it, and the command hands itself over
        /// (`CommandRun.handOver`) only when it needs the network, the Secret Service or a passphrase. Every other
        /// command is handed over at once.
        let cached: Bool
        init(_ name: String, _ type: any SignInCommand.Type, cached: Bool = false) {
            self.name = name
            self.type = type
            self.cached = cached
        }
    }

    /// Whether `type` is marked as on the cached path.
    static func isCached(_ type: any SignInCommand.Type) -> Bool {
        entries.contains { $0.cached && ObjectIdentifier($0.type) == ObjectIdentifier(type) }
    }

    /// Every command by name, in the order of `signin --help`.
    static var entries: [Entry] {
        [Entry("login", Login.self), Entry("restore", Restore.self, cached: true), Entry("whoami", Whoami.self, cached: true),
         Entry("token", Token.self, cached: true), Entry("id-token", IDTokenCommand.self, cached: true), Entry("dpop-proof", DPoPProofCommand.self),
         Entry("status", Status.self, cached: true), Entry("accounts", AccountsCommand.self, cached: true), Entry("use", Use.self, cached: true),
         Entry("logout", Logout.self), Entry("exec", Exec.self), Entry("git-credential", GitCredential.self),
         Entry("kubectl-credential", KubectlCredential.self, cached: true), Entry("docker-credential", DockerCredential.self),
         Entry("aws-credential-process", AWSCredentialProcess.self, cached: true), Entry("aws", AWSCommand.self),
         Entry("google-executable-source", GoogleExecutableSource.self, cached: true), Entry("google", GoogleCommand.self),
         Entry("metadata-server", MetadataServerCommand.self), Entry("agent", AgentCommand.self), Entry("ssh", SSHCommand.self),
         Entry("mcp", MCPCommand.self),
         Entry("key", KeyCommand.self), Entry("lock", Lock.self), Entry("init", Init.self), Entry("client-metadata", ClientMetadata.self), Entry("version", Version.self, cached: true),
         Entry("help", HelpCommand.self, cached: true), Entry("completion", CompletionCommand.self, cached: true)]
    }

    static var all: [any SignInCommand.Type] { entries.map(\.type) }

    static var specs: [CommandSpec] { entries.map { $0.type.spec } }

    /// The command a program name means (the binary run under a link's name), or nil for `signin` itself.
    static func forProgram(_ name: String) -> (any SignInCommand.Type)? {
        for e in entries where e.type.spec.programNames.contains(name) { return e.type }
        return nil
    }

    static func named(_ name: String) -> (any SignInCommand.Type)? {
        for e in entries where e.name == name { return e.type }
        return nil
    }

    /// The name the list gives a command.
    static func name(of type: any SignInCommand.Type) -> String {
        for e in entries where ObjectIdentifier(e.type) == ObjectIdentifier(type) { return e.name }
        preconditionFailure("\(type) is not in Commands.entries")
    }

    /// The command whose name is nearest to a mistyped one.
    static func suggestion(for word: String) -> String? { Suggest.nearest(word, among: entries.map(\.name)) }
}
