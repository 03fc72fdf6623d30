import FoundationEssentials
import SignInKit

#if canImport(Glibc)
import Glibc
#endif

/// The hidden command the completion scripts call.
enum CompletionCandidates {
    /// `signin __complete accounts|profiles PREFIX -- WORDS...` (hidden; the completion scripts call it): the
    /// stored accounts of the configuration WORDS name (`--profile`, `-c`), or the configuration names, that start
    /// with PREFIX, one a line. A candidate holding a control character (a newline would split it) is left out;
    /// nothing is ever asked (no passphrase prompt on TAB) and nothing is printed on failure.
    static func complete(_ args: [String], _ env: [String: String], _ io: IOStreams) -> ExitCode {
        guard let kind = args.first else { return .usage }
        let prefix = args.count > 1 && args[1] != "--" ? args[1] : ""
        let words = args.firstIndex(of: "--").map { Array(args[($0 + 1)...]) } ?? []
        var config: String?, profile: String?
        var i = 0
        while i < words.count {
            if i + 1 < words.count, ["-c", "--config"].contains(words[i]) { config = words[i + 1]; i += 2; continue }
            if i + 1 < words.count, words[i] == "--profile" { profile = words[i + 1]; i += 2; continue }
            i += 1
        }
        var candidates: [String] = []
        switch kind {
        case "profiles":
            candidates = SignInConfiguration.profileNames(environment: env).filter(SignInConfiguration.isValidProfileName)
        case "accounts":
            for p in [profile, env["SIGNIN_PROFILE"]].compactMap({ $0 }) where !p.isEmpty && !SignInConfiguration.isValidProfileName(p) { return .success }
            let path = SignInConfiguration.defaultPath(explicit: config, profile: profile, environment: env)
            guard let configuration = try? SignInConfiguration.load(path: path) else { return .success }
            let client = SignInClient(configuration: configuration, environment: env, passphrase: { _ in nil })
            candidates = ((try? client.accounts()) ?? []).map { $0.profile.email ?? $0.userID }
        default:
            return .usage
        }
        let literal = candidates.filter { c in
            !c.isEmpty && c.hasPrefix(prefix) && !c.unicodeScalars.contains(where: \.isControl)
        }
        if !literal.isEmpty { io.out(literal.joined(separator: "\n")) }
        return .success
    }
}
