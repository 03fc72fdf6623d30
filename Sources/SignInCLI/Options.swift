import SignInKit

/// One option a command accepts: its spelling, its value (if it takes one) and its help line.
struct OptionSpec: Sendable, Equatable {
    let long: String
    let short: String?
    /// The value's placeholder (`PATH`, `SECONDS`), or nil for a flag.
    let value: String?
    let help: String
    /// The words the value may be (`key move --to`), which the completions offer; empty for a free value.
    let choices: [String]
    /// What the value must be, checked as the command line is read (`Arguments.parse`), before any command runs.
    let check: ValueCheck?

    init(_ long: String, short: String? = nil, value: String? = nil, choices: [String] = [], check: ValueCheck? = nil, _ help: String) {
        self.long = long
        self.short = short
        self.value = value
        self.choices = choices
        self.check = check
        self.help = help
    }

    /// How it is written in help: `-c, --config PATH`.
    var synopsis: String { (short.map { "\($0), " } ?? "") + long + (value.map { " \($0)" } ?? "") }

    static let config = OptionSpec("--config", short: "-c", value: "PATH", "Configuration file (default: see FILES)")
    static let profile = OptionSpec("--profile", value: "NAME", "Use the named configuration $XDG_CONFIG_HOME/signin/NAME.json (also $SIGNIN_PROFILE)")
    static let account = OptionSpec("--account", value: "ACCOUNT", "The account, by e-mail or sub (also $SIGNIN_ACCOUNT; default: the current one)")
    static let json = OptionSpec("--json", "Machine-readable output on standard output")
    static let help = OptionSpec("--help", short: "-h", "Show this help")
    static let minTTL = OptionSpec("--min-ttl", value: "SECONDS", "Refresh first when the token expires within this many seconds (default 60)")
    static let forceRefresh = OptionSpec("--force-refresh", "Refresh even when the stored token is fresh")
    static let passphraseFD = OptionSpec("--passphrase-fd", value: "N", "Read the store's passphrase from file descriptor N (for scripts)")
    static let yes = OptionSpec("--yes", short: "-y", "Do not ask for confirmation")
}

/// What an option's value must be, declared with the option and checked where the command line is read, so a command
/// (or an option group) reads a value that is already right.
enum ValueCheck: Sendable, Equatable {
    /// Any text but the empty one; the message says what the value names (`--audience`: whom the token is for).
    case nonEmpty(what: String)
    /// A resource indicator (RFC 8707): an absolute https URI without a fragment, http only on loopback.
    case resourceIndicator
    /// An API's URL, as the account commands take it (the same rule, named for what it finds).
    case apiURL
    /// A service account's e-mail, or a comma-separated delegation chain of them.
    case serviceAccountChain

    /// Why `value`, given to `option`, is not what it must be; nil when it is.
    func problem(_ value: String, option: String) -> String? {
        switch self {
        case .nonEmpty(let what):
            return value.isEmpty ? "\(option) needs a value (\(what))" : nil
        case .resourceIndicator, .apiURL:
            guard !SignInConfiguration.isValidResource(value) else { return nil }
            let rule = "an absolute https URI without a fragment; http only on loopback"
            return "\(option) \"\(value.withoutControlCharacters)\" is not \(self == .apiURL ? "an API's URL" : "a resource indicator") (\(rule))"
        case .serviceAccountChain:
            let items = Self.serviceAccounts(value)
            guard !items.isEmpty else { return "\(option) needs a service account's e-mail" }
            guard let bad = items.first(where: { !ServiceAccounts.isEmail($0) }) else { return nil }
            return "\(option): \"\(bad.withoutControlCharacters)\" is not a service account's e-mail (NAME@PROJECT.iam.gserviceaccount.com)"
        }
    }

    /// The e-mails of a comma-separated chain, as `serviceAccountChain` checks them.
    static func serviceAccounts(_ value: String) -> [String] { value.split(separator: ",").map { $0.trimmingWhitespace } }
}

/// What the command line said, checked against what the command accepts (`CommandSpec.options`, stated as data). In
/// debug builds, reading an option the command does not declare is noted (`undeclaredReads`: its value would always be
/// missing), and the tests read every command's options so (`CommandParsingTests`).
struct Arguments {
    var values: [String: String] = [:]
    /// Every value of an option given more than once (`signin ssh --account A --account B`), in order.
    var repeated: [String: [String]] = [:]
    var flags: Set<String> = []
    var positional: [String] = []
    /// Everything after `--` (the command `signin exec` runs).
    var rest: [String] = []
    /// `rest` began at an explicit `--` (not at a command's first word or an option passed on).
    var restAfterSeparator = false

    #if DEBUG
    /// What the command line was parsed for (`parse`): the options a reader may read.
    private var accepted: [OptionSpec]?
    /// The options read that the command does not declare, noted in debug builds only.
    let undeclaredReads = UndeclaredReads()
    private func note(_ o: OptionSpec) {
        if let accepted, !accepted.contains(o) { undeclaredReads.note(o) }
    }
    #else
    @inline(__always) private func note(_ o: OptionSpec) {}
    #endif

    func has(_ o: OptionSpec) -> Bool {
        note(o)
        return flags.contains(o.long)
    }

    /// `--config` and `--profile` each name a configuration file: not both.
    func checkOneConfiguration() throws(UsageError) {
        let (config, profile) = (value(.config), value(.profile))
        if config != nil && profile != nil { throw UsageError("--config and --profile name two different files; give one") }
    }
    func value(_ o: OptionSpec) -> String? {
        note(o)
        return values[o.long]
    }
    func all(_ o: OptionSpec) -> [String] {
        note(o)
        return repeated[o.long] ?? []
    }

    func int(_ o: OptionSpec, default d: Int, in range: ClosedRange<Int>) throws(UsageError) -> Int {
        guard let v = value(o) else { return d }
        guard let n = Int(v), range.contains(n) else {
            throw UsageError("\(o.long) must be a whole number from \(range.lowerBound) to \(range.upperBound), not \"\(v)\"")
        }
        return n
    }

    /// Parses `args` for `command`: an option the command does not take is refused by name, with the nearest one
    /// it does take; `--name=value` equals `--name value`.
    static func parse(_ args: [String], for command: CommandSpec) throws(UsageError) -> Arguments {
        let accepted = command.accepted
        var a = Arguments()
        #if DEBUG
        a.accepted = accepted
        #endif
        var mistake: UsageError?
        var i = 0
        while i < args.count {
            let arg = args[i]
            i += 1
            if arg == "--" {
                a.rest = Array(args[i...])
                a.restAfterSeparator = true
                break
            }
            guard arg.hasPrefix("-"), arg != "-" else {
                a.positional.append(arg)
                // `signin exec COMMAND ARGS...` without `--`: the rest belongs to COMMAND.
                if command.takesCommand {
                    a.rest = Array(args[(i - 1)...])
                    a.positional.removeLast()
                    break
                }
                continue
            }
            var name = arg, inline: String?
            if arg.hasPrefix("--"), let eq = arg.firstIndex(of: "=") {
                name = String(arg[..<eq])
                inline = String(arg[arg.index(after: eq)...])
            }
            if command.passesUnknownOptions && !accepted.contains(where: { $0.long == name || $0.short == name }) {
                a.rest = Array(args[(i - 1)...])
                break
            }
            guard let spec = accepted.first(where: { $0.long == name || $0.short == name }) else {
                let known = Commands.specs.flatMap(\.options).contains { $0.long == name || $0.short == name }
                let hint = Suggest.nearest(name, among: accepted.map(\.long)).map { " (did you mean \($0)?)" } ?? ""
                throw UsageError(known ? "`signin \(command.name)` does not take \(name)\(hint)" : "unknown option \(name)\(hint)")
            }
            if let placeholder = spec.value {
                let value: String
                if let inline {
                    value = inline
                } else {
                    guard i < args.count else { throw UsageError("\(spec.long) needs a value (\(placeholder))") }
                    value = args[i]
                    i += 1
                }
                if mistake == nil, let problem = spec.check?.problem(value, option: spec.long) { mistake = UsageError(problem) }
                a.values[spec.long] = value
                a.repeated[spec.long, default: []].append(value)
            } else {
                guard inline == nil else { throw UsageError("\(spec.long) takes no value") }
                a.flags.insert(spec.long)
            }
        }
        if mistake == nil, !command.takesArguments, let extra = a.positional.first { mistake = UsageError("`signin \(command.name)` takes no argument \"\(extra)\"") }
        // A wrong value or word is refused, unless the command line asks for help (which says what is right).
        if let mistake, !a.flags.contains(OptionSpec.help.long) { throw mistake }
        return a
    }
}

/// The options a command read that its declaration does not hold (debug builds): each once, in order.
final class UndeclaredReads {
    private(set) var options: [OptionSpec] = []
    func note(_ o: OptionSpec) { if !options.contains(o) { options.append(o) } }
}

/// A mistake in how signin was called: exit 2, with the message and a pointer to help.
struct UsageError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

