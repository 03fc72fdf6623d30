import SignInKit
import FoundationEssentials
import SignInProtocol
import SignInTransport

#if canImport(Glibc)
import Glibc
#endif

/// The command line: argv in, text and an exit code out. Each command is a type (`Commands.all`) that reads and checks
/// its own arguments; what is common to every command that reads a configuration is checked here once.
public enum CLI {
    /// Synchronous on purpose: the cached commands never start the concurrency runtime's threads; only commands
    /// that wait on the network or a person go through `blockingAwait`.
    /// `program` is the name the binary was run under (argv[0]): a command's other name (`docker-credential-signin`)
    /// runs that command.
    public static func main(program: String, _ args: [String]) -> Int32 {
        let name = program.split(separator: "/").last.map(String.init) ?? program
        // (Only a name other than signin's looks at the list: building it costs on every start.)
        if name != "signin", let command = Commands.forProgram(name) { return main([command.name] + args) }
        return main(args)
    }

    public static func main(_ args: [String]) -> Int32 { main(args, io: .standard) }

    /// A run whose text goes to `io` (a test's memory, or this process's standard output and error).
    static func main(_ args: [String], io: IOStreams) -> Int32 {
        do {
            return try run(args, io).rawValue
        } catch {
            // README's promise: with --json, every error is also a JSON object on standard output.
            if args.prefix(while: { $0 != "--" }).contains("--json") {
                io.out(JSONText.object(["error": .string(error.message), "exit_code": .int(Int(ExitCode.usage.rawValue))]))
            }
            io.err("signin: \(error.message)\nRun `signin --help` for usage.")
            return ExitCode.usage.rawValue
        }
    }

    /// Parses and dispatches, nothing more: the command, its options checked as declared, `--help`; then the
    /// command's `run`, which builds what it needs (`CommandRun`). A command not on the cached path is handed to the
    /// release build's dynamic half at once (`Commands.entries` marks those that are).
    static func run(_ args: [String], _ io: IOStreams) throws(UsageError) -> ExitCode {
        if args.first == Completion.hiddenCommand { return CompletionCandidates.complete(Array(args.dropFirst()), ProcessEnvironment.current, io) }
        guard let (type, rest) = try split(args) else {
            io.err(Help.general)
            return .usage
        }
        let spec = type.spec
        let a = try Arguments.parse(rest, for: spec)
        if a.has(.help) {
            io.out(Help.text(for: spec))
            return .success
        }
        let env = ProcessEnvironment.current
        if spec.readsConfiguration {
            try a.checkOneConfiguration()
            if let fd = a.value(.passphraseFD), Int32(fd).map({ $0 >= 0 }) != true { throw UsageError("--passphrase-fd needs a file descriptor number") }
        }
        let command = try type.init(a, env)
        let r = CommandRun(command: spec.name, a, env, io)
        if let problem = r.session.profileProblem { throw UsageError(problem) }
        if !Commands.isCached(type) { r.handOver("\(spec.name) is not on the cached path") }
        do {
            return try command.run(r)
        } catch let e as SignInError {
            return fail(e, json: r.json, r.invocation, io)
        } catch let e as UsageError {
            throw e
        } catch {
            return fail(.unsupported(reason: "\(error)"), json: r.json, r.invocation, io)
        }
    }

    /// The spellings of every option that takes a value, of any command.
    static let valueOptions: Set<String> = Set(Commands.specs.flatMap(\.options).filter { $0.value != nil }.flatMap { [$0.long] + ($0.short.map { [$0] } ?? []) })

    /// Finds the command: the first argument that is not an option (or an option's value).
    /// `--help` and `--version` alone stand for `help` and `version`.
    static func split(_ args: [String]) throws(UsageError) -> ((any SignInCommand.Type), [String])? {
        var i = 0
        while i < args.count {
            let arg = args[i]
            // Every option that takes a value is read with its value wherever it stands (`signin --min-ttl 5 token`).
            // (Only an option before the command builds the list: `signin token` never does.)
            if arg.hasPrefix("-") && Self.valueOptions.contains(arg) { i += 2; continue }
            if arg == "--" { break }
            if !arg.hasPrefix("-") {
                guard let command = Commands.named(arg) else {
                    let hint = Commands.suggestion(for: arg).map { " (did you mean `\($0)`?)" } ?? ""
                    throw UsageError("unknown command \"\(arg)\"\(hint)")
                }
                var rest = args
                rest.remove(at: i)
                return (command, rest)
            }
            i += 1
        }
        if args.contains("--version") { return (Version.self, args.filter { $0 != "--version" }) }
        if args.contains("--help") || args.contains("-h") { return (HelpCommand.self, args.filter { $0 != "--help" && $0 != "-h" }) }
        return nil
    }

    static func fail(_ e: SignInError, json: Bool, _ invocation: Invocation, _ io: IOStreams) -> ExitCode {
        var code = ExitCode(e)
        // An API's server that forgot signin's client: as good as not signed in (what `login --resource` mends).
        if case .providerError(_, "invalid_client", _) = e, invocation.resource != nil { code = .notSignedIn }
        if json { io.out(JSONText.object(["error": .string(e.description), "exit_code": .int(Int(code.rawValue))])) }
        io.err("signin: \(e.description)" + (advice(for: e, invocation).map { "\n\($0)" } ?? ""))
        return code
    }

    /// What to run next, as a command that works as printed: the library's messages speak to any program's user;
    /// the command line adds its own commands, with the options that chose this run's configuration and account.
    static func advice(for e: SignInError, _ invocation: Invocation) -> String? {
        switch e {
        case .noPreviousSignIn(.agentRefused):
            return "On the machine you came from, `signin ssh --account ACCOUNT ...` forwards an account (and `signin agent --list` there shows what is forwarded)."
        case .noPreviousSignIn(.agentUnavailable):
            return "The SSH session that forwarded it has ended, or SIGNIN_AGENT_SOCK is stale: connect again with `signin ssh` (or unset SIGNIN_AGENT_SOCK to use this machine's own sign-in)."
        case .noPreviousSignIn(.noCurrentAccount):
            return "Run `\(invocation.command("use", account: false)) ACCOUNT` (see `\(invocation.command("accounts", account: false))`), or name one with --account."
        case .noPreviousSignIn:
            let login = "Run `\(invocation.command("login"))` to sign in"
            return invocation.command == Exec.name ? login + ", or `signin exec --login ...` to sign in first and go on." : login + "."
        case .accountNotFound:
            return "`\(invocation.command("login"))` signs it in; `\(invocation.command("accounts", account: false))` lists those stored."
        case .providerError(_, "invalid_client", _) where invocation.resource != nil:
            return "The server no longer knows signin's client for this API (a server restarted without its registrations forgets them): `\(invocation.command("login"))` registers again and signs in."
        case .providerError(_, "invalid_client", _):
            let file = invocation.configurationPath.map { " in \($0)" } ?? ""
            return "The provider does not know this client, or not this way of authenticating it: check client_id, client_secret and token_endpoint_auth_method\(file) against the client registered there (`\(invocation.command("init", account: false))` writes them again)."
        case .configNotFound:
            return "Write one with `\(invocation.command("init", account: false))`."
        case .configInvalid(_, "client_id", _):
            return "`\(invocation.command("init", account: false))` writes a configuration for your own client."
        case .passphraseUnavailable:
            return "Run it on a terminal, or give the passphrase on a file descriptor: --passphrase-fd N."
        case .storeUnreadable(let path, _) where path.hasSuffix(".cred") || path.hasSuffix(".current") || path.hasSuffix("/key") || path.hasSuffix(".json"):
            return "`\(invocation.command("logout", account: false))` removes credentials that cannot be read; `\(invocation.command("status", account: false))` says where the store and its key are."
        default:
            return nil
        }
    }
}
