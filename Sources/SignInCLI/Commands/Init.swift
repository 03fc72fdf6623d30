import FoundationEssentials
import SignInKit

#if canImport(Glibc)
import Glibc
#endif

/// `signin init [--profile NAME | -c PATH]`: a first configuration, written interactively.
struct Init: SignInCommand {
    static let spec = CommandSpec(
        of: Self.self, options: [.config, .profile, .yes], summary: "Write a first configuration, interactively",
        details: "Asks for a client ID and secret (Google) or an issuer (any OpenID provider, checked by discovery) and\nwrites the configuration file, mode 0600. Never overwrites a file without asking.",
        readsConfiguration: false, takesJSON: false)

    let arguments: Arguments

    init(_ a: Arguments, _ env: [String: String]) throws(UsageError) {
        try a.checkOneConfiguration()
        _ = a.has(.yes)  // declared here; `initialize` reads it
        arguments = a
    }

    func run(_ r: CommandRun) throws -> ExitCode { Self.initialize(arguments, r.environment, r.io) }

    /// `signin init`: asks what a first configuration needs and writes it (mode 0600, one field a line), never over
    /// an existing file without a yes.
    ///
    /// 1. The provider: Google (the console steps follow) or another OpenID provider, whose issuer is checked by
    ///    fetching its discovery document. A wrong answer, an issuer that is not an https URL, or one that does not
    ///    answer as an OpenID provider is said and asked again.
    /// 2. The client ID (for Google it must end in `.apps.googleusercontent.com`) and secret (read without echo on a
    ///    terminal), then the scopes; the file is checked as `signin login` would read it, then written.
    ///
    /// Standard input ending (`</dev/null`, a script out of answers) stops it with a message (exit 2); Ctrl-C is a
    /// cancel (exit 4). Either way nothing is written.
    static func initialize(_ a: Arguments, _ env: [String: String], _ io: IOStreams) -> ExitCode {
        let path = SignInConfiguration.defaultPath(explicit: a.value(.config), profile: a.value(.profile), environment: env)
        let terminal = Posix.isatty(0)
        HiddenInput.cancelOnSignals(code: ExitCode.canceled.rawValue, message: "\nsignin init: canceled; nothing was written.\n")
        struct EndOfInput: Error {}
        func ask(_ question: String, default d: String? = nil, hidden: Bool = false) throws(EndOfInput) -> String {
            io.send(.error, question + (d.map { " [\($0)]" } ?? "") + ": ")
            let quiet = hidden && terminal && HiddenInput.echoOff(0)
            let line = readLine()
            if quiet {
                HiddenInput.restore()
                io.send(.error, "\n")
            }
            guard let line else { throw EndOfInput() }
            let answer = line.trimmingWhitespace
            return answer.isEmpty ? (d ?? "") : answer
        }
        /// Asks until `check` accepts the answer (it returns why not, said before asking again).
        func askUntil(_ question: String, default d: String? = nil, hidden: Bool = false, _ check: (String) -> String?) throws(EndOfInput) -> String {
            while true {
                let answer = try ask(question, default: d, hidden: hidden)
                guard let problem = check(answer) else { return answer }
                io.err("  \(problem)")
            }
        }
        if Posix.access(path, F_OK) == 0 {
            guard terminal || a.has(.yes), io.confirm("\(path) exists. Overwrite it?") else {
                io.err("signin: \(path) exists; nothing was changed (remove it, or choose another file with --profile NAME or -c PATH).")
                return terminal ? .canceled : .usage  // "no" is the person's choice, as logout's "no"; no terminal: a usage error
            }
        }
        io.err("signin init writes \(path).")
        var config: [String: JSONValueOut] = [:]
        do throws(EndOfInput) {
            let choice = try askUntil("Provider: 1) Google  2) another OpenID provider", default: "1") { answer in
                ["1", "2", "google", "other"].contains(answer.lowercased()) ? nil : "Answer 1 (Google) or 2 (another OpenID provider)."
            }
            let google = choice == "1" || choice.lowercased() == "google"
            if google {
                io.err("""

                    In the Google Cloud console (https://console.cloud.google.com/apis/credentials):
                      1. Choose or create a project; set up the OAuth consent screen (External, add yourself as a test user).
                      2. Create credentials > OAuth client ID > Application type "Desktop app".
                      3. Copy the client ID and client secret shown (a desktop client's secret is not a secret).

                    """)
                config["issuer"] = .string(GoogleProvider.issuer)
            } else {
                let issuer = try askUntil("Issuer URL (for example https://login.example.com/realms/main)") { issuer in
                    guard !issuer.isEmpty else { return "The issuer is the provider's URL, as its documentation gives it." }
                    let json = JSONText.object(["client_id": .string("probe"), "issuer": .string(issuer)])
                    guard var probe = try? SignInConfiguration.parse(Data(json.utf8), sourcePath: "the issuer you gave") else {
                        return "\"\(issuer.withoutControlCharacters)\" is not an https URL (plain http only to this machine)."
                    }
                    probe.sourcePath = path
                    do throws(SignInError) {
                        let endpoints = try SignInClient(configuration: probe, environment: env).discoverEndpointsBlocking()
                        io.err("Found \(issuer)'s discovery document: sign-in at \(endpoints.authorizationEndpoint.absoluteString).")
                        return nil
                    } catch {
                        return "Could not use \(issuer.withoutControlCharacters) as an OpenID provider: \(error.description) Check the URL and try again."
                    }
                }
                config["issuer"] = .string(issuer)
            }
            let clientID = try askUntil("Client ID") { id in
                if id.isEmpty { return "A client ID is needed (the provider shows it where the client was created)." }
                if google, let suffix = GoogleProvider.rules.clientIDSuffix, !id.hasSuffix(suffix) {
                    return "A Google client ID ends in \(suffix) (copy it from the console)."
                }
                return nil
            }
            config["client_id"] = .string(clientID)
            let secret = try ask("Client secret (leave empty for a public client)", default: "", hidden: true)
            if !secret.isEmpty { config["client_secret"] = .string(secret) }
            let scopes = try askUntil("Scopes", default: "openid email profile") { s in s.isEmpty ? "Give at least one scope." : nil }
            config["scopes"] = .array(scopes.split(separator: " ").map { .string(String($0)) })
        } catch {
            io.err("\nsignin init: standard input ended before every question was answered; nothing was written. Run it on a terminal, or give each answer on its own line.")
            return .usage
        }
        let text = JSONText.pretty(config, order: ["issuer", "client_id", "client_secret", "scopes"])
        do {
            _ = try SignInConfiguration.parse(Data(text.utf8), sourcePath: path)
        } catch {
            io.err("signin: \(error.description); nothing was written.")
            return ExitCode(error)
        }
        // The folders up to the file, the last one private.
        Directory.create(PathName(path: path).deletingLastPathComponent)
        let fd: Int32
        switch Posix.opening(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o600) {
        case .success(let opened): fd = opened
        case .failure(let e):
            io.err("signin: cannot write \(path): \(e)")
            return .failure
        }
        Posix.fchmod(fd, 0o600)
        // The file itself, not output: written whole to its descriptor.
        FileIO.writeAll(fd, text)
        Posix.fsync(fd)
        Posix.close(fd)
        let next = a.value(.profile).map { "signin login --profile \($0)" } ?? a.value(.config).map { _ in "signin login -c \(Invocation.quoted(path))" } ?? "signin login"
        io.out("Wrote \(path). Next: \(next)")
        return .success
    }
}
