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
        try checkProfileNames(a, env)
        if spec.readsConfiguration {
            try a.checkOneConfiguration()
            if let fd = a.value(.passphraseFD), Int32(fd).map({ $0 >= 0 }) != true { throw UsageError("--passphrase-fd needs a file descriptor number") }
        }
        let command = try type.init(a, env)
        if !command.startsStatic { HandOverPoint.require(.command(command.handOverReason)) }
        // Over SSH: a forwarded agent serves the token commands and says what it offers to the others (whoami,
        // status, accounts; login and logout happen on the laptop), unless a configuration here is named on purpose.
        if let socket = ForwardedAgent.socket(a, env) {
            let invocation = Invocation(a, env, command: spec.name)
            do throws(SignInError) {
                if let answered = try command.run(agent: AgentTokens(agent: AgentClient(socketPath: socket), account: a.value(.account) ?? env["SIGNIN_ACCOUNT"].flatMap { $0.isEmpty ? nil : $0 }, io: io)) {
                    return answered
                }
            } catch {
                return fail(error, json: a.has(.json), invocation, io)
            }
        }
        if let answered = try command.runWithoutConfiguration(env, io) { return answered }

        let path = SignInConfiguration.defaultPath(explicit: a.value(.config), profile: a.value(.profile), environment: env)
        // $SIGNIN_CONFIG wins over $SIGNIN_PROFILE: a person who set both hears which one counts.
        if a.value(.config) == nil, a.value(.profile) == nil, let p = env["SIGNIN_PROFILE"], !p.isEmpty, let c = env["SIGNIN_CONFIG"], !c.isEmpty {
            io.err("signin: $SIGNIN_PROFILE (\(p.withoutControlCharacters)) is ignored: $SIGNIN_CONFIG names the configuration (\(c.withoutControlCharacters)); unset one of them")
        }
        let json = a.has(.json)
        // Only commands that may sign in ask whether a browser can open here (which may read /proc).
        let browsing = command.signsIn ? Browsing(noBrowser: command.noBrowser, paste: command.acceptsPaste, env) : .none
        var invocation = Invocation(a, env, command: spec.name)
        invocation.configurationPath = path
        invocation.resource = command.apiResource
        let client: SignInClient
        do throws(SignInError) {
            let known = KnownClient()
            var events = Events(pasteEnabled: browsing.paste, headless: browsing.headless, environment: env)
            events.invocation = invocation
            events.io = io
            events.deviceFlowAvailable = { known.client?.offersDeviceFlow ?? true }
            let shown = events
            client = SignInClient(configuration: try configuration(path, a, env, command, io: io), environment: env, onEvent: { shown.show($0) },
                                  passphrase: Passphrase.provider(fd: a.value(.passphraseFD).flatMap { Int32($0) }))
            known.client = client
        } catch {
            return fail(error, json: json, invocation, io)
        }
        let account = a.value(.account) ?? env["SIGNIN_ACCOUNT"].flatMap { $0.isEmpty ? nil : $0 }
        var context = Context(client: client, account: account, json: json, environment: env, browsing: browsing, io: io)
        context.invocation = invocation
        do {
            return try command.run(context)
        } catch {
            return fail(error, json: json, invocation, io)
        }
    }

    /// The configuration at `path`, as `APICommandConfiguration.resolve` decides for this command (its doc comment has
    /// the tree); the command line says whether the file was named on purpose and how a person confirms.
    static func configuration(_ path: String, _ a: Arguments, _ env: [String: String], _ command: some SignInCommand,
                              io: IOStreams = .standard) throws(SignInError) -> SignInConfiguration {
        let asked = APICommandConfiguration.Command(resource: command.apiResource, signsIn: command.signsIn, addedScopes: command.addedScopes)
        let named = { a.value(.config) != nil || a.value(.profile) != nil || !(env["SIGNIN_CONFIG"] ?? "").isEmpty || !(env["SIGNIN_PROFILE"] ?? "").isEmpty }
        // A move of the API to another authorization server is followed only when a person at a terminal says so.
        let confirm = { (detail: String) -> Bool in Posix.isatty(0) && Posix.isatty(2) && io.confirm("signin: \(detail)\nSign in at the new server?") }
        return try APICommandConfiguration.resolve(path: path, named: named, asked, storeDirectory: { CredentialStore.defaultDirectory(environment: env) },
                                                   environment: env, confirmServerChange: confirm)
    }

    /// `--profile NAME` and `$SIGNIN_PROFILE` name a file in the configuration folder, never a path.
    static func checkProfileNames(_ a: Arguments, _ env: [String: String]) throws(UsageError) {
        // Two plain checks, not a loop over an array of pairs: this runs on every command (and an array of tuples
        // costs a type lookup by name at run time).
        func check(_ name: String?, _ source: String) throws(UsageError) {
            guard let name, !name.isEmpty, !SignInConfiguration.isValidProfileName(name) else { return }
            throw UsageError("\(source) \"\(name.withoutControlCharacters)\" is not a configuration name (letters, digits, . _ -, not starting with . or -)")
        }
        try check(a.value(.profile), "--profile")
        try check(env["SIGNIN_PROFILE"], "$SIGNIN_PROFILE")
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

/// The options that chose this run's configuration and account (`--profile`, `$SIGNIN_PROFILE`, `-c`,
/// `--account`), so that advice repeats them.
struct Invocation: Sendable {
    let command: String?
    var configuration: [String] = []
    var account: String?
    /// The configuration file this run read, once known.
    var configurationPath: String?
    /// The API this run is for (`--resource URL` of a command for one API's sign-in): `login` is suggested with it.
    var resource: String?

    init(_ a: Arguments, _ env: [String: String], command: String?) {
        self.command = command
        if let c = a.value(.config) { configuration = ["-c", c] } else if let p = a.value(.profile) ?? env["SIGNIN_PROFILE"].flatMap({ $0.isEmpty ? nil : $0 }) {
            configuration = ["--profile", p]
        }
        account = a.value(.account)
    }

    /// `signin NAME` with this run's configuration (and account, where the command takes one).
    func command(_ name: String, account withAccount: Bool = true) -> String {
        var words = ["signin", name] + configuration
        if name == "login", let resource { words += ["--resource", resource] }
        if withAccount, let account { words += ["--account", account] }
        return words.map(Self.quoted).joined(separator: " ")
    }

    /// A word as a POSIX shell reads it back.
    static func quoted(_ w: String) -> String {
        let safe: Set<UInt8> = Set("@%+=:,./_-".utf8)
        let plain = !w.isEmpty && w.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x7A) || safe.contains($0) }
        return plain ? w : "'" + w.replacing("'", with: "'\\''") + "'"
    }
}

/// The client, once built: what the sign-in's advice asks about the provider. Weak: the client's own event
/// handler holds this, and a strong reference back would be a cycle that outlives the run.
final class KnownClient: @unchecked Sendable {
    weak var client: SignInClient?
}

/// What every command that reads a configuration runs with: the client, the account and the output form.
struct Context {
    let client: SignInClient
    /// `--account`, else `$SIGNIN_ACCOUNT`; nil for the current account.
    let account: String?
    let json: Bool
    let environment: [String: String]
    let browsing: Browsing
    /// Where the command's text goes.
    let io: IOStreams
    /// How this run was asked for (its configuration and account options), to suggest another command as `signin
    /// login -c FILE`, so the suggestion acts on the same configuration.
    var invocation: Invocation? = nil

    /// `signin NAME` with this run's configuration option (and account), as a person would type it next.
    func command(_ name: String) -> String { invocation?.command(name) ?? "signin " + name }

    /// The account restored as the command line asks: `--account`, `--min-ttl`, `--force-refresh`.
    func restore(_ freshness: Freshness, _ token: TokenKind = .access) throws(SignInError) -> SignInUser {
        try client.restore(account: account, minimumValidity: .seconds(freshness.minTTL), forceRefresh: freshness.forceRefresh, token: token)
    }
}

/// How a sign-in reaches a browser, decided once per run and only for commands that may sign in.
struct Browsing {
    /// No browser will be opened here: `--no-browser`, or no display, or SSH (an explicit `$BROWSER` wins).
    let headless: Bool
    /// The address the browser ended at may be pasted on standard input: always without a local browser,
    /// otherwise when a person is at a terminal in the foreground (reading a terminal from the background
    /// would stop the process). Never with `--device`, and never for a bridge, whose standard input is not ours.
    let paste: Bool

    static let none = Browsing(headless: false, paste: false)

    private init(headless: Bool, paste: Bool) {
        self.headless = headless
        self.paste = paste
    }

    /// `noBrowser`: `--no-browser`; `paste`: the command reads a pasted answer (a login, not a bridge, not `--device`).
    init(noBrowser: Bool, paste: Bool, _ env: [String: String]) {
        headless = noBrowser || !Browser.localBrowserLikely(environment: env)
        self.paste = paste && (headless || (Posix.isatty(0) && Posix.tcgetpgrp(0) == Posix.getpgrp()))
    }
}
