import SignInBase
import SignInTransport

/// Which hosts git may be given an access token for (`git_hosts`): a token goes only where the person said, so a
/// global `credential.helper` line does not hand it to every server git talks to.
public enum GitHosts {
    /// The patterns in force for `configuration`: its `git_hosts`, else the default.
    public static func patterns(for configuration: SignInConfiguration) -> [String] {
        configuration.gitHosts ?? configuration.providerRules.defaultGitHosts
    }

    /// `host`, `host:port` or `*.domain[:port]`: letters, digits, `-` and `.`, a wildcard only as the first label.
    public static func isValidPattern(_ p: String) -> Bool {
        var rest = Substring(p.lowercased())
        if let colon = rest.lastIndex(of: ":") {
            guard let port = Int(rest[rest.index(after: colon)...]), (1...65535).contains(port) else { return false }
            rest = rest[..<colon]
        }
        if rest.hasPrefix("*.") { rest = rest.dropFirst(2) }
        return !rest.isEmpty && !rest.hasPrefix(".") && !rest.hasSuffix(".") && !rest.contains("..")
            && rest.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == ".") }
    }

    /// Whether git's `host` attribute (`name` or `name:port`) matches one of `patterns`. A pattern without a port
    /// matches any port; `*.domain` matches every name below `domain`, not `domain` itself.
    public static func allows(_ host: String, patterns: [String]) -> Bool {
        let (name, port) = split(host.lowercased())
        return patterns.contains { pattern in
            let (pName, pPort) = split(pattern.lowercased())
            if let pPort, pPort != port { return false }
            if pName.hasPrefix("*.") { return name.hasSuffix(pName.dropFirst(1)) && name.count > pName.count - 1 }
            return name == pName
        }
    }

    /// The resource `git_resources` gives `host`, if any: an exact pattern before a wildcard, then the longest.
    public static func resource(for host: String, in map: [String: String]) -> String? {
        let matching = map.keys.filter { allows(host, patterns: [$0]) }
        let best = matching.sorted { a, b in
            let (wa, wb) = (a.hasPrefix("*."), b.hasPrefix("*."))
            return wa != wb ? !wa : (a.count != b.count ? a.count > b.count : a < b)
        }.first
        return best.flatMap { map[$0] }
    }

    /// Whether `host` is this machine (where plain http is allowed, as for the provider's endpoints).
    public static func isLoopback(_ host: String) -> Bool {
        var name = split(host.lowercased()).name
        if name.hasPrefix("[") && name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        return name == "localhost" || name == "::1" || name.hasPrefix("127.") && name.split(separator: ".").count == 4
    }

    private static func split(_ host: String) -> (name: String, port: Int?) {
        if host.hasPrefix("["), let close = host.firstIndex(of: "]") {
            let rest = host[host.index(after: close)...]
            return (String(host[...close]), rest.hasPrefix(":") ? Int(rest.dropFirst()) : nil)
        }
        guard let colon = host.lastIndex(of: ":"), host.firstIndex(of: ":") == colon, let port = Int(host[host.index(after: colon)...]) else { return (host, nil) }
        return (String(host[..<colon]), port)
    }
}
