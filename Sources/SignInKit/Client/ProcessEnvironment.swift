#if canImport(Glibc)
import Glibc
#endif

/// The process environment as a dictionary, read from `environ` (FoundationEssentials has no ProcessInfo
/// environment on every platform, and this avoids loading more of Foundation).
@_spi(CLI) public enum ProcessEnvironment {
    /// The current environment variables.
    public static var current: [String: String] {
        var env: [String: String] = [:]
        var p = environ
        while let entry = p.pointee {
            let s = String(cString: entry)
            if let eq = s.firstIndex(of: "=") { env[String(s[..<eq])] = String(s[s.index(after: eq)...]) }
            p += 1
        }
        return env
    }

    /// One variable, without reading the whole environment; nil when unset or empty.
    public static func value(_ name: String) -> String? {
        guard let v = getenv(name) else { return nil }
        let s = String(cString: v)
        return s.isEmpty ? nil : s
    }
}
