import Dispatch
import SignInKit

#if canImport(Glibc)
import Glibc
#endif

/// Exit codes, the same for every command (also in README and `--help`).
enum ExitCode {
    static let success: Int32 = 0
    static let failure: Int32 = 1
    static let usage: Int32 = 2
    static let notSignedIn: Int32 = 3
    static let canceled: Int32 = 4
    static let network: Int32 = 5
    static let timedOut: Int32 = 6

    static func of(_ e: SignInError) -> Int32 {
        switch e {
        case .noPreviousSignIn: return notSignedIn
        case .canceled: return canceled
        case .timedOut: return timedOut
        case .providerError, .networkUnavailable, .callbackRejected, .invalidIDToken, .revocationFailed: return network
        case .configInvalid, .unsupported: return usage
        case .mismatchWithCurrentUser, .scopesAlreadyGranted, .storeUnreadable, .storeUnwritable, .system: return failure
        }
    }
}

struct UsageError: Error { let message: String }

/// Parsed options; each command reads the ones it documents.
struct Options {
    var command: String?
    var config: String?
    var json = false
    var help = false
    var noBrowser = false
    var device = false
    var port: Int?
    var timeout = 300
    var minTTL = 60
    var forceRefresh = false
    var revoke = false
    var loginHint: String?

    static func parse(_ raw: [String]) throws(UsageError) -> Options {
        // `--name=value` is the same as `--name value`.
        let args = raw.flatMap { a -> [String] in
            guard a.hasPrefix("--"), let eq = a.firstIndex(of: "=") else { return [a] }
            return [String(a[..<eq]), String(a[a.index(after: eq)...])]
        }
        var o = Options()
        var i = 0
        func value(_ name: String) throws(UsageError) -> String {
            i += 1
            guard i < args.count else { throw UsageError(message: "\(name) needs a value") }
            return args[i]
        }
        func int(_ name: String, _ range: ClosedRange<Int>) throws(UsageError) -> Int {
            let v = try value(name)
            guard let n = Int(v), range.contains(n) else { throw UsageError(message: "\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound), not \"\(v)\"") }
            return n
        }
        while i < args.count {
            let a = args[i]
            switch a {
            case "-h", "--help": o.help = true
            case "--version": o.command = "version"
            case "--config", "-c": o.config = try value(a)
            case "--json": o.json = true
            case "--no-browser": o.noBrowser = true
            case "--device": o.device = true
            case "--port": o.port = try int(a, 1...65535)
            case "--timeout": o.timeout = try int(a, 1...86400)
            case "--min-ttl": o.minTTL = try int(a, 0...86400)
            case "--force-refresh": o.forceRefresh = true
            case "--revoke": o.revoke = true
            case "--login-hint": o.loginHint = try value(a)
            default:
                if a.hasPrefix("-") { throw UsageError(message: "unknown option \(a)") }
                guard o.command == nil else { throw UsageError(message: "unexpected argument \"\(a)\"") }
                o.command = a
            }
            i += 1
        }
        return o
    }
}

enum CLI {
    /// Synchronous on purpose: the cached commands never start the concurrency runtime's threads; only `login`
    /// and `logout --revoke` (which wait on the network or the browser) go through `blockingAwait`.
    static func main(_ args: [String]) -> Int32 {
        let o: Options
        do { o = try Options.parse(args) } catch {
            err("signin: \(error.message)\nRun `signin --help` for usage.")
            return ExitCode.usage
        }
        if o.help || o.command == nil || o.command == "help" {
            out(Help.text(for: o.command == "help" ? nil : o.command))
            return o.command == nil && !o.help ? ExitCode.usage : ExitCode.success
        }
        if o.command == "version" {
            out("signin \(SignInKitVersion.string)")
            return ExitCode.success
        }
        let allowed: [String: Set<String>] = [
            "login": [], "restore": [], "whoami": [], "token": [], "status": [], "logout": [],
        ]
        guard let command = o.command, allowed[command] != nil else {
            err("signin: unknown command \"\(o.command ?? "")\"\nRun `signin --help` for the commands.")
            return ExitCode.usage
        }
        let env = ProcessEnvironment.current
        let path = Configuration.defaultPath(explicit: o.config, environment: env)
        // Only `login` asks whether a browser can open here (which may read /proc); cached commands do not.
        let browsing = command == "login" ? Commands.Browsing(o, env) : .none
        let client: SignInClient
        do {
            let events = Events(pasteEnabled: browsing.paste, headless: browsing.headless, environment: env)
            client = SignInClient(configuration: try Configuration.load(path: path), environment: env, onEvent: { events.show($0) })
        } catch {
            return fail(error, json: o.json)
        }
        do {
            switch command {
            case "login": return try blockingAwait { try await Commands.login(client, o, browsing) }
            case "restore": return try Commands.restore(client, o)
            case "whoami": return try Commands.whoami(client, o)
            case "token": return try Commands.token(client, o)
            case "status": return try Commands.status(client, o)
            case "logout": return try blockingAwait { try await Commands.logout(client, o) }
            default: return ExitCode.usage
            }
        } catch let e as SignInError {
            return fail(e, json: o.json)
        } catch {
            err("signin: \(error)")
            return ExitCode.failure
        }
    }

    static func fail(_ e: SignInError, json: Bool) -> Int32 {
        let code = ExitCode.of(e)
        if json {
            out(JSONText.object(["error": .string(e.description), "exit_code": .int(Int(code))]))
        }
        err("signin: \(e.description)")
        return code
    }
}

/// Runs async work from synchronous code and waits for it (the main thread has nothing else to do).
func blockingAwait<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let box = ResultBox<T>()
    let done = DispatchSemaphore(value: 0)
    Task {
        do { box.result = .success(try await body()) } catch { box.result = .failure(error) }
        done.signal()
    }
    done.wait()
    return try box.result!.get()
}

/// Written by the task before the semaphore is signalled, read after the wait: no concurrent access.
final class ResultBox<T>: @unchecked Sendable {
    var result: Result<T, Error>?
}

/// Output without Foundation's FileHandle: plain write(2), so stdout stays unbuffered and scripts see every line.
func out(_ s: String) { writeAll(1, s + "\n") }
func err(_ s: String) { writeAll(2, s + "\n") }
func writeAll(_ fd: Int32, _ s: String) {
    var bytes = Array(s.utf8)
    var off = 0
    while off < bytes.count {
        let n = bytes.withUnsafeMutableBytes { write(fd, $0.baseAddress! + off, $0.count - off) }
        if n < 0 && errno == EINTR { continue }
        if n <= 0 { return }
        off += n
    }
}
