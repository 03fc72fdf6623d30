import FoundationEssentials
@_spi(CLI) import SignInKit

#if canImport(Glibc)
import Glibc
#endif

extension Commands {
    /// `signin init`: asks what a first configuration needs and writes it (mode 0600), never over an existing
    /// file without a yes. Google: the console steps, then the client ID and secret. Another provider: its
    /// issuer, checked by fetching its discovery document, then the client.
    static func initialize(_ a: Arguments, _ env: [String: String]) -> ExitCode {
        let path = SignInConfiguration.defaultPath(explicit: a.value(.config), profile: a.value(.profile), environment: env)
        func ask(_ question: String, default d: String? = nil) -> String? {
            writeAll(2, question + (d.map { " [\($0)]" } ?? "") + ": ")
            guard let line = readLine() else { return nil }
            let answer = line.trimmingCharacters
            return answer.isEmpty ? d : answer
        }
        if access(path, F_OK) == 0 {
            guard isatty(0) == 1 || a.has(Command.yes), confirm("\(path) exists. Overwrite it?") else {
                err("signin: \(path) exists; nothing was changed (remove it, or choose another file with --profile NAME or -c PATH).")
                return .usage
            }
        }
        err("signin init writes \(path).")
        guard let choice = ask("Provider: 1) Google  2) another OpenID provider", default: "1") else { return .usage }
        var config: [String: JSONValueOut] = [:]
        if choice == "1" || choice.lowercased() == "google" {
            err("""

                In the Google Cloud console (https://console.cloud.google.com/apis/credentials):
                  1. Choose or create a project; set up the OAuth consent screen (External, add yourself as a test user).
                  2. Create credentials > OAuth client ID > Application type "Desktop app".
                  3. Copy the client ID and client secret shown (a desktop client's secret is not a secret).

                """)
            config["issuer"] = .string("https://accounts.google.com")
        } else {
            guard let issuer = ask("Issuer URL (for example https://login.example.com/realms/main)") else { return .usage }
            var probe = SignInConfiguration(clientID: "probe", issuer: issuer)
            probe.sourcePath = path
            if let problem = try? SignInConfiguration.parse(Data(JSONText.object(["client_id": .string("probe"), "issuer": .string(issuer)]).utf8), sourcePath: "the issuer you gave") {
                probe = problem
            } else {
                err("signin: \"\(issuer)\" is not an https URL (plain http only to this machine).")
                return .usage
            }
            do {
                let endpoints = try SignInClient(configuration: probe, environment: env).discoverEndpoints()
                err("Found \(issuer)'s discovery document: sign-in at \(endpoints.authorizationEndpoint.absoluteString).")
            } catch {
                err("signin: could not use \(issuer) as an OpenID provider: \(error.description)")
                return ExitCode(error)
            }
            config["issuer"] = .string(issuer)
        }
        guard let clientID = ask("Client ID"), !clientID.isEmpty else {
            err("signin: a client ID is needed; nothing was written.")
            return .usage
        }
        config["client_id"] = .string(clientID)
        if let secret = ask("Client secret (leave empty for a public client)", default: ""), !secret.isEmpty { config["client_secret"] = .string(secret) }
        let scopes = ask("Scopes", default: "openid email profile") ?? "openid email profile"
        config["scopes"] = .array(scopes.split(separator: " ").map { .string(String($0)) })
        let text = JSONText.object(config) + "\n"
        do {
            _ = try SignInConfiguration.parse(Data(text.utf8), sourcePath: path)
        } catch {
            err("signin: \(error.description); nothing was written.")
            return ExitCode(error)
        }
        // The folders up to the file, the last one private.
        var dir = ""
        let parts = path.split(separator: "/").dropLast()
        for (i, part) in parts.enumerated() {
            dir += "/" + part
            _ = mkdir(dir, i == parts.count - 1 ? 0o700 : 0o755)
        }
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            err("signin: cannot write \(path): \(String(cString: strerror(errno)))")
            return .failure
        }
        fchmod(fd, 0o600)
        writeAll(fd, text)
        close(fd)
        out("Wrote \(path). Next: signin login" + (a.value(.profile).map { " --profile \($0)" } ?? ""))
        return .success
    }
}
