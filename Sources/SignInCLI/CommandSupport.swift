import FoundationEssentials
import SignInKit

#if canImport(Glibc)
import Glibc
#endif

// What several commands share: printing a profile, dates, padding, the encrypted store, typed blocking awaits, the
// rule that a command takes no words it does not declare.

/// The profile as `login`, `restore` and `whoami` print it (`verb` first, or JSON).
func printProfile(_ user: SignInUser, _ c: Context, verb: String?) {
    let io = c.io
    if c.json {
        io.out(JSONText.object(JSONText.user(user)))
    } else {
        io.out(verb.map { "\($0) \(user.accountLine)" } ?? user.accountLine)
    }
}

/// `spec`'s command takes no word but the ones it declares.
/// The scopes `option` gives (again for more; each value may hold several, space-separated), each checked to be one
/// (RFC 6749 3.3): `login --scope` and `mcp --scope`.
func scopes(_ a: Arguments, _ option: OptionSpec) throws(UsageError) -> [String] {
    let scopes = a.all(option).flatMap { $0.split(separator: " ").map(String.init) }
    if let bad = scopes.first(where: { $0.contains(where: { $0.isWhitespace || $0 == "\"" || $0 == "\\" || ($0.asciiValue ?? 0x21) < 0x21 }) }) {
        throw UsageError("\(option.long) \"\(bad.withoutControlCharacters)\" is not a scope (RFC 6749 3.3: no spaces, quotes or backslashes)")
    }
    return scopes
}

/// `blockingAwait` for typed-throwing work.
func blockingAwaitTyped<T: Sendable>(_ body: @escaping @Sendable () async throws(SignInError) -> T) throws(SignInError) -> T {
    do { return try blockingAwait { try await body() } } catch let e as SignInError { throw e } catch { throw .system(reason: "\(error)") }
}

func iso8601(_ d: Date) -> String { d.formatted(.iso8601) }

extension String {
    func padding(to width: Int) -> String { count >= width ? self : self + String(repeating: " ", count: width - count) }
}

extension SignInClient {
    /// The command always keeps credentials in the encrypted file store (CLI.run builds the client so).
    var fileStore: CredentialStore { credentialStore! }
}

/// The command `exec` runs, as shells treat one: not found on PATH is exit 127, found but not runnable 126, each said
/// on standard error in the same words whichever way `exec` runs it (becoming it, or staying beside it).
enum ExecCommand {
    /// Where `argv[0]` is; nil after saying it is not found. `executable`: it must be runnable too.
    static func locate(_ argv: [String], environment: [String: String], executable: Bool = true, _ io: IOStreams) -> String? {
        if let path = ExecutableSearch.locate(argv[0], environment: environment, executable: executable) { return path }
        io.err("signin: \(argv[0].withoutControlCharacters): command not found")
        return nil
    }

    /// Says why `argv` could not be started and gives the shell's exit code for it.
    static func cannotRun(_ argv: [String], _ e: SystemError, _ io: IOStreams) -> ExitCode {
        io.err("signin: cannot run \(argv[0].withoutControlCharacters): \(e)")
        return ExitCode(rawValue: e.isMissing ? 127 : 126)
    }

    /// The exit code of a command that was not found.
    static let notFound = ExitCode(rawValue: 127)
}

extension Arguments {
    /// The options that chose this run's configuration and account, as a command line another program will run
    /// signin with (`credential_process`, an `external_account` executable): `-c` made absolute.
    var selectionArguments: [String] {
        var args: [String] = []
        if let c = value(.config) { args += ["-c", ProcessEnvironment.absolute(c)] }
        if let p = value(.profile) { args += ["--profile", p] }
        if let account = value(.account) { args += ["--account", account] }
        return args
    }
}

extension SignInUser {
    /// Who, in one line: the profile, or, where the server gives no identity, the API and its server.
    var accountLine: String {
        guard identity == .none else { return profile.displayName }
        let api = profile.userID.withoutControlCharacters
        return api == issuer ? "\(issuer) (the server gives no identity)" : "\(api) at \(issuer.withoutControlCharacters) (the server gives no identity)"
    }
}
