import SignInBase
import SignInTransport

/// Which container registries `signin docker-credential get` gives a token to (`docker_registries`): like
/// `git_hosts`, a token goes only where the person said, never to whatever registry a pulled image names.
public enum DockerRegistries {
    /// The patterns in force for `configuration`: its `docker_registries`, else its provider's (Google's registries
    /// for Google, from SignInGoogle) and none otherwise.
    public static func patterns(for configuration: SignInConfiguration) -> [String] {
        configuration.dockerRegistries ?? configuration.providerRules.defaultDockerRegistries
    }

    /// `host`, `host:port`, or a host whose first label holds one `*` (`*.gcr.io`, `*-docker.pkg.dev`), which
    /// stands for one or more letters, digits or hyphens within that label.
    public static func isValidPattern(_ p: String) -> Bool {
        let (name, port) = split(p.lowercased())
        if p.contains(":") && port == nil { return false }
        let labels = name.split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count >= 2 || (labels.count == 1 && !name.contains("*")), labels.allSatisfy({ !$0.isEmpty }) else { return false }
        for (i, label) in labels.enumerated() {
            let stars = label.filter { $0 == "*" }.count
            guard stars == 0 || (i == 0 && stars == 1) else { return false }
            guard label.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "*") }) else { return false }
        }
        return true
    }

    /// The registry as docker and skopeo name it (`host[:port]`, sometimes with a scheme or a path), reduced to
    /// `host[:port]`, lowercased; nil when it is not a registry name.
    public static func normalized(_ server: String) -> String? {
        var s = Substring(server.trimmingWhitespace.lowercased())
        for scheme in ["https://", "http://"] where s.hasPrefix(scheme) { s = s.dropFirst(scheme.count) }
        if let slash = s.firstIndex(of: "/") { s = s[..<slash] }
        let host = String(s)
        guard !host.isEmpty, host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-.:[]".contains($0)) }) else { return nil }
        return host
    }

    /// Whether `registry` (`host[:port]`, normalized) matches one of `patterns`; a pattern without a port matches any port.
    public static func allows(_ registry: String, patterns: [String]) -> Bool {
        let (name, port) = split(registry.lowercased())
        return patterns.contains { pattern in
            let (pName, pPort) = split(pattern.lowercased())
            if let pPort, pPort != port { return false }
            guard let star = pName.firstIndex(of: "*") else { return name == pName }
            // The star stands for at least one character of the first label: no dot, no empty match.
            let prefix = pName[..<star], suffix = pName[pName.index(after: star)...]
            guard name.count > prefix.count + suffix.count, name.hasPrefix(prefix), name.hasSuffix(suffix) else { return false }
            let middle = name.dropFirst(prefix.count).dropLast(suffix.count)
            return middle.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" }
        }
    }

    private static func split(_ host: String) -> (name: String, port: Int?) {
        guard let colon = host.lastIndex(of: ":"), !host.hasSuffix("]") else { return (host, nil) }
        guard let port = Int(host[host.index(after: colon)...]), (1...65535).contains(port) else { return (host, nil) }
        return (String(host[..<colon]), port)
    }
}
