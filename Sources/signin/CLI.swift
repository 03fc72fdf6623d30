@_spi(CLI) import SignInKit

#if canImport(Glibc)
import Glibc
#endif

/// The command line: argv in, text and an exit code out.
enum CLI {
    /// Synchronous on purpose: the cached commands never start the concurrency runtime's threads; only commands
    /// that wait on the network or a person go through `blockingAwait`.
    static func main(_ args: [String]) -> Int32 {
        do {
            return try run(args).rawValue
        } catch {
            // README's promise: with --json, every error is also a JSON object on standard output.
            if args.prefix(while: { $0 != "--" }).contains("--json") {
                out(JSONText.object(["error": .string(error.message), "exit_code": .int(Int(ExitCode.usage.rawValue))]))
            }
            err("signin: \(error.message)\nRun `signin --help` for usage.")
            return ExitCode.usage.rawValue
        }
    }

    static func run(_ args: [String]) throws(UsageError) -> ExitCode {
        if args.first == Completion.hiddenCommand { return Commands.complete(Array(args.dropFirst()), ProcessEnvironment.current) }
        guard let (command, rest) = try split(args) else {
            err(Help.general)
            return .usage
        }
        let a = try Arguments.parse(rest, for: command)
        if a.has(.help) {
            out(Help.text(for: command))
            return .success
        }
        let env = ProcessEnvironment.current
        switch command {
        case .help: return try Commands.help(a)
        case .version: return Commands.version(a)
        case .completion: return try Commands.completion(a)
        case .`init`:
            try checkProfileNames(a, env)
            return Commands.initialize(a, env)
        default: break
        }
        if a.value(.config) != nil && a.value(.profile) != nil { throw UsageError("--config and --profile name two different files; give one") }
        try checkProfileNames(a, env)
        if command == .login && a.has(Command.device) && a.has(Command.noBrowser) {
            throw UsageError("--device and --no-browser are two different ways to sign in without a local browser; choose one")
        }
        if command == .logout && a.has(Command.all) && a.value(.account) != nil { throw UsageError("--all and --account contradict each other; give one") }
        if command == .use && a.positional.count != 1 { throw UsageError("`signin use` takes one ACCOUNT (an e-mail or sub); see `signin accounts`") }
        if command == .gitCredential && (a.positional.count != 1 || !["get", "store", "erase"].contains(a.positional[0])) {
            throw UsageError("`signin git-credential` takes one of get, store, erase (git calls it so)")
        }
        if command == .key && (a.positional != ["move"] || a.value(Command.to).flatMap(KeyStorage.init(rawValue:)) == nil || a.value(Command.to) == "auto") {
            throw UsageError("usage: signin key move --to secret-service|passphrase|file")
        }
        if let fd = a.value(Command.passphraseFD), Int32(fd).map({ $0 >= 0 }) != true { throw UsageError("--passphrase-fd needs a file descriptor number") }
        if command == .exec && a.rest.isEmpty { throw UsageError("`signin exec` needs a command to run: signin exec [--env NAME] -- COMMAND [ARGS...]") }
        if ![.use, .gitCredential, .key].contains(command), let extra = a.positional.first {
            throw UsageError("`signin \(command.rawValue)` takes no argument \"\(extra)\"")
        }
        if a.value(Command.port) != nil { _ = try a.int(Command.port, default: 0, in: 1...65535) }
        _ = try a.int(Command.timeout, default: 300, in: 1...86400)
        _ = try a.int(.minTTL, default: 60, in: 0...86400)
        if let name = a.value(Command.env), name.isEmpty || name.contains("=") || name.first!.isNumber || !name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }) {
            throw UsageError("--env \"\(name)\" is not an environment variable name (letters, digits and _)")
        }
        let path = SignInConfiguration.defaultPath(explicit: a.value(.config), profile: a.value(.profile), environment: env)
        // `accounts` with no configuration named and none at the default place answers as `accounts --all` does.
        let named = a.value(.config) != nil || a.value(.profile) != nil || !(env["SIGNIN_CONFIG"] ?? "").isEmpty || !(env["SIGNIN_PROFILE"] ?? "").isEmpty
        if command == .accounts && (a.has(Command.all) || (!named && access(path, F_OK) != 0)) { return Commands.accountsEverywhere(a, env) }

        let json = a.has(.json)
        let login = command == .login || (command == .exec && a.has(Command.loginFlag))
            || (command == .kubectlCredential && KubectlCredential.interactive(env))
        // Only commands that may sign in ask whether a browser can open here (which may read /proc).
        let browsing = login ? Browsing(a, env, command: command) : .none
        let invocation = Invocation(a, env, command: command)
        let client: SignInClient
        do throws(SignInError) {
            let known = KnownClient()
            var events = Events(pasteEnabled: browsing.paste, headless: browsing.headless, environment: env)
            events.invocation = invocation
            events.deviceFlowAvailable = { known.client?.offersDeviceFlow ?? true }
            let shown = events
            client = SignInClient(configuration: try SignInConfiguration.load(path: path), environment: env, onEvent: { shown.show($0) },
                                  passphrase: Passphrase.provider(fd: a.value(Command.passphraseFD).flatMap { Int32($0) }))
            known.client = client
        } catch {
            return fail(error, json: json, invocation)
        }
        let account = a.value(.account) ?? env["SIGNIN_ACCOUNT"].flatMap { $0.isEmpty ? nil : $0 }
        let context = Context(client: client, arguments: a, account: account, json: json, environment: env, browsing: browsing)
        do {
            switch command {
            case .login: return try Commands.login(context)
            case .restore: return try Commands.restore(context)
            case .whoami: return try Commands.whoami(context)
            case .token: return try Commands.token(context)
            case .idToken: return try Commands.idToken(context)
            case .status: return try Commands.status(context)
            case .accounts: return try Commands.accounts(context)
            case .use: return try Commands.use(context)
            case .logout: return try Commands.logout(context)
            case .exec: return try Bridges.exec(context)
            case .gitCredential: return try Bridges.gitCredential(context)
            case .key: return try Commands.keyMove(context)
            case .lock: return Commands.lock(context)
            case .kubectlCredential: return try Bridges.kubectlCredential(context)
            case .help, .version, .completion, .`init`: return .usage  // answered above
            }
        } catch {
            return fail(error, json: json, invocation)
        }
    }

    /// `--profile NAME` and `$SIGNIN_PROFILE` name a file in the configuration folder, never a path.
    static func checkProfileNames(_ a: Arguments, _ env: [String: String]) throws(UsageError) {
        for (name, source) in [(a.value(.profile), "--profile"), (env["SIGNIN_PROFILE"], "$SIGNIN_PROFILE")] {
            guard let name, !name.isEmpty, !SignInConfiguration.isValidProfileName(name) else { continue }
            throw UsageError("\(source) \"\(name.withoutControlCharacters)\" is not a configuration name (letters, digits, . _ -, not starting with . or -)")
        }
    }

    /// The spellings of every option that takes a value, of any command.
    static let valueOptions: Set<String> = Set(Command.allCases.flatMap(\.options).filter { $0.value != nil }.flatMap { [$0.long] + ($0.short.map { [$0] } ?? []) })

    /// Finds the command: the first argument that is not an option (or the value of `-c`/`--profile`).
    /// `--help` and `--version` alone stand for `help` and `version`.
    static func split(_ args: [String]) throws(UsageError) -> (Command, [String])? {
        var i = 0
        while i < args.count {
            let arg = args[i]
            // Every option that takes a value is read with its value wherever it stands (`signin --min-ttl 5 token`).
            // (Only an option before the command builds the list: `signin token` never does.)
            if arg.hasPrefix("-") && Self.valueOptions.contains(arg) { i += 2; continue }
            if arg == "--" { break }
            if !arg.hasPrefix("-") {
                guard let command = Command(rawValue: arg) else {
                    let hint = Command.suggestion(for: arg).map { " (did you mean `\($0)`?)" } ?? ""
                    throw UsageError("unknown command \"\(arg)\"\(hint)")
                }
                var rest = args
                rest.remove(at: i)
                return (command, rest)
            }
            i += 1
        }
        if args.contains("--version") { return (.version, args.filter { $0 != "--version" }) }
        if args.contains("--help") || args.contains("-h") { return (.help, args.filter { $0 != "--help" && $0 != "-h" }) }
        return nil
    }

    static func fail(_ e: SignInError, json: Bool, _ invocation: Invocation) -> ExitCode {
        let code = ExitCode(e)
        if json { out(JSONText.object(["error": .string(e.description), "exit_code": .int(Int(code.rawValue))])) }
        err("signin: \(e.description)" + (advice(for: e, invocation).map { "\n\($0)" } ?? ""))
        return code
    }

    /// What to run next, as a command that works as printed: the library's messages speak to any program's user;
    /// the command line adds its own commands, with the options that chose this run's configuration and account.
    static func advice(for e: SignInError, _ invocation: Invocation) -> String? {
        switch e {
        case .noPreviousSignIn(.noCurrentAccount):
            return "Run `\(invocation.command("use", account: false)) ACCOUNT` (see `\(invocation.command("accounts", account: false))`), or name one with --account."
        case .noPreviousSignIn:
            let login = "Run `\(invocation.command("login"))` to sign in"
            return invocation.command == .exec ? login + ", or `signin exec --login ...` to sign in first and go on." : login + "."
        case .accountNotFound:
            return "`\(invocation.command("login"))` signs it in; `\(invocation.command("accounts", account: false))` lists those stored."
        case .configNotFound(let file):
            return "Write one with `\(invocation.initCommand(file))`."
        case .configInvalid(_, "client_id", _):
            return "`\(invocation.initCommand(nil))` writes a configuration for your own client."
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
    let command: Command?
    var configuration: [String] = []
    var account: String?

    init(_ a: Arguments, _ env: [String: String], command: Command?) {
        self.command = command
        if let c = a.value(.config) { configuration = ["-c", c] } else if let p = a.value(.profile) ?? env["SIGNIN_PROFILE"].flatMap({ $0.isEmpty ? nil : $0 }) {
            configuration = ["--profile", p]
        }
        account = a.value(.account)
    }

    /// `signin NAME` with this run's configuration (and account, where the command takes one).
    func command(_ name: String, account withAccount: Bool = true) -> String {
        var words = ["signin", name] + configuration
        if withAccount, let account { words += ["--account", account] }
        return words.map(Self.quoted).joined(separator: " ")
    }

    /// `signin init` writing `file` (or this run's configuration).
    func initCommand(_ file: String?) -> String {
        (["signin", "init"] + configuration).map(Self.quoted).joined(separator: " ")
    }

    /// A word as a POSIX shell reads it back.
    static func quoted(_ w: String) -> String {
        let safe: Set<UInt8> = Set("@%+=:,./_-".utf8)
        let plain = !w.isEmpty && w.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x7A) || safe.contains($0) }
        return plain ? w : "'" + w.replacing("'", with: "'\\''") + "'"
    }
}

/// The client, once built: what the sign-in's advice asks about the provider.
final class KnownClient: @unchecked Sendable {
    var client: SignInClient?
}

/// What every command function gets: the client, its arguments and the environment.
struct Context {
    let client: SignInClient
    let arguments: Arguments
    /// `--account`, else `$SIGNIN_ACCOUNT`; nil for the current account.
    let account: String?
    let json: Bool
    let environment: [String: String]
    let browsing: Browsing

    var minTTL: Int { (try? arguments.int(.minTTL, default: 60, in: 0...86400)) ?? 60 }

    /// The account restored as the command line asks: `--account`, `--min-ttl`, `--force-refresh` (unless
    /// `forceRefresh` is given: a sign-in just made needs no forced refresh).
    func restore(_ token: TokenKind = .access, forceRefresh: Bool? = nil) throws(SignInError) -> SignInUser {
        try client.restore(account: account, minimumValidity: .seconds(minTTL), forceRefresh: forceRefresh ?? arguments.has(.forceRefresh), token: token)
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

    init(_ a: Arguments, _ env: [String: String], command: Command) {
        headless = a.has(Command.noBrowser) || !Browser.localBrowserLikely(environment: env)
        paste = command == .login && !a.has(Command.device) && (headless || (isatty(0) == 1 && tcgetpgrp(0) == getpgrp()))
    }
}
