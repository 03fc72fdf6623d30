import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// The rule every provider URL must pass before anything is sent to it: an absolute http(s) URL with no control
/// characters, and plain http only to this machine. "This machine" is decided on the address, never on how a
/// name begins: an IP literal in 127.0.0.0/8, `::1`, or the name `localhost` (which resolves to loopback by
/// RFC 6761). `http://127.evil.example/` is a name like any other.
package enum EndpointURL {
    /// Why `url` may not be used, or nil when it may.
    /// `url` with `/.well-known/NAME` between its host (and port) and its path, as RFC 8414 3.1 and RFC 9728 3.1 place
    /// a metadata document; nil for a URL without a scheme and host.
    package static func wellKnown(_ name: String, insertedInto url: String) -> String? {
        guard let u = URL(string: url), let scheme = u.scheme?.lowercased(), let host = u.host else { return nil }
        let port = u.port.map { ":\($0)" } ?? ""
        let h = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        let path = u.path == "/" ? "" : u.path
        return "\(scheme)://\(h)\(port)/.well-known/\(name)\(path)"
    }

    package static func problem(_ url: String) -> String? {
        if url.unicodeScalars.contains(where: { $0.isControl }) { return "contains control characters" }
        guard let u = URL(string: url), let scheme = u.scheme?.lowercased(), let host = u.host, !host.isEmpty,
              scheme == "https" || scheme == "http" else {
            return "\"\(url)\" is not an absolute http(s) URL"
        }
        if scheme == "http" && !isLoopback(host: host) {
            return "\(url) is not https (plain http is allowed only to 127.0.0.0/8, ::1 or localhost)"
        }
        return nil
    }

    /// True for an IP literal in 127.0.0.0/8, `::1` (with or without brackets), or `localhost`.
    package static func isLoopback(host: String) -> Bool {
        var h = host.lowercased()
        if h.hasPrefix("[") && h.hasSuffix("]") { h = String(h.dropFirst().dropLast()) }
        if h == "localhost" || h == "localhost." { return true }
        var v4 = in_addr()
        if Posix.inet_pton(AF_INET, h, &v4) == 1 { return UInt32(bigEndian: v4.s_addr) >> 24 == 127 }
        var v6 = in6_addr()
        if Posix.inet_pton(AF_INET6, h, &v6) == 1 {
            return withUnsafeBytes(of: &v6) { b in b.prefix(15).allSatisfy { $0 == 0 } && b[15] == 1 }
        }
        return false
    }
}
