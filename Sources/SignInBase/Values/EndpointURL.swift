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

    /// `scheme://authority` of an absolute URL as it is spelled (the part before its path, query or fragment), or nil.
    package static func origin(of url: String) -> String? {
        let bytes = Array(url.utf8)
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")), bytes.count > colon + 3,
              bytes[colon + 1] == UInt8(ascii: "/"), bytes[colon + 2] == UInt8(ascii: "/") else { return nil }
        let start = colon + 3
        var end = start
        while end < bytes.count, bytes[end] != UInt8(ascii: "/"), bytes[end] != UInt8(ascii: "?"), bytes[end] != UInt8(ascii: "#") { end += 1 }
        return end > start ? String(decoding: bytes[..<end], as: UTF8.self) : nil
    }

    /// Whether `a` and `b` are on one origin (RFC 6454: scheme, host and port, the scheme's default port filled in, case
    /// ignored where it does not count). A URL with user information, or one that is not absolute http(s), is on no
    /// origin: a token or a header for one never goes to such an address.
    package static func sameOrigin(_ a: String, _ b: String) -> Bool {
        func key(_ s: String) -> String? {
            guard !s.unicodeScalars.contains(where: { $0.isControl || $0 == "\\" }), let u = URL(string: s),
                  let scheme = u.scheme?.lowercased(), scheme == "http" || scheme == "https",
                  let host = u.host?.lowercased(), !host.isEmpty, u.user == nil, u.password == nil,
                  let origin = origin(of: s), !origin.contains("@") else { return nil }
            let h = host.hasPrefix("[") ? host : (host.contains(":") ? "[\(host)]" : host)
            return "\(scheme)://\(h):\(u.port ?? (scheme == "https" ? 443 : 80))"
        }
        guard let ka = key(a), let kb = key(b) else { return false }
        return ka == kb
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

    /// `url` in the form RFC 3986 6.2.2-6.2.3 compares URLs in, without its query and fragment (as a DPoP proof's
    /// `htu` is compared, RFC 9449 4.3): scheme and host in lower case, no user information, the scheme's default port
    /// left out, percent-encoded unreserved characters decoded and the others' hex in capitals, dot segments
    /// removed, an empty path as `/`, and no trailing `/`. Two spellings of one endpoint come out the same.
    package static func normalized(_ url: String) -> String {
        var t = Substring(url)
        if let i = t.firstIndex(where: { $0 == "?" || $0 == "#" }) { t = t[..<i] }
        guard let schemeEnd = t.firstRange(of: "://") else { return String(t) }
        let scheme = t[..<schemeEnd.lowerBound].lowercased()
        let rest = t[schemeEnd.upperBound...]
        let authorityEnd = rest.firstIndex(of: "/") ?? rest.endIndex
        var authority = rest[..<authorityEnd]
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        var host = authority.lowercased()
        if scheme == "https", host.hasSuffix(":443") { host.removeLast(4) }
        if scheme == "http", host.hasSuffix(":80") { host.removeLast(3) }
        if host.hasSuffix(":") { host.removeLast() }
        var segments: [String] = []
        let rawPath = rest[authorityEnd...]
        let parts = rawPath.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        for (i, part) in parts.enumerated() {
            let segment = normalizedPercentEncoding(part)
            let last = i == parts.count - 1
            switch segment {
            case ".": if last { segments.append("") }
            case "..":
                if !segments.isEmpty { segments.removeLast() }
                if last { segments.append("") }
            default: segments.append(segment)
            }
        }
        var path = "/" + segments.joined(separator: "/")
        while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
        return scheme + "://" + host + path
    }

    /// Percent-encoded unreserved characters decoded (RFC 3986 2.3), every other escape with capital hex.
    private static func normalizedPercentEncoding(_ s: Substring) -> String {
        let bytes = Array(s.utf8)
        var out: [UInt8] = []
        var i = 0
        func hex(_ c: UInt8) -> UInt8? {
            switch c {
            case 0x30...0x39: return c - 0x30
            case 0x41...0x46: return c - 0x41 + 10
            case 0x61...0x66: return c - 0x61 + 10
            default: return nil
            }
        }
        while i < bytes.count {
            if bytes[i] == UInt8(ascii: "%"), i + 2 < bytes.count, let h = hex(bytes[i + 1]), let l = hex(bytes[i + 2]) {
                let v = h << 4 | l
                let unreserved = (0x41...0x5A).contains(v) || (0x61...0x7A).contains(v) || (0x30...0x39).contains(v) || v == 0x2D || v == 0x2E || v == 0x5F || v == 0x7E
                if unreserved { out.append(v) } else { out += Array(("%" + String(v, radix: 16, uppercase: true).leftPadded(2)).utf8) }
                i += 3
            } else {
                out.append(bytes[i])
                i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
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
