import SignInBase

/// The head of an HTTP/1.x request as the loopback server reads it: method, target, `Host` and the other header
/// fields. Parsing is pure and bounded, so it can be fuzzed.
package struct HTTPRequestHead: Equatable {
    package let method: String
    package let path: String
    package let query: Substring
    /// The `Host` header, lowercased; nil when absent.
    package let host: String?
    /// Every header field but `Host`, names lowercased, values trimmed, in order.
    package var fields: [Field] = []
    /// The tag of the listener it came in on ("" for the loopback address; a Unix socket's own otherwise).
    package var listener = ""
    /// Who sent it, for a Unix socket (`SO_PEERCRED`).
    package var peer: PeerCredentials?

    package struct Field: Equatable {
        package let name: String
        package let value: String
    }

    /// The first value of the header `name` (lowercase), or nil.
    package func header(_ name: String) -> String? { fields.first { $0.name == name }?.value }

    static let maxBytes = 8 * 1024
    static let maxHeaders = 64

    package enum Parse: Equatable {
        case incomplete, tooLarge, malformed
        case request(HTTPRequestHead)
    }

    /// Parses the request head from the bytes received so far.
    package static func parse(_ buffer: [UInt8]) -> Parse {
        guard let end = headEnd(buffer) else { return buffer.count > maxBytes ? .tooLarge : .incomplete }
        guard end <= maxBytes else { return .tooLarge }
        let head = buffer[..<end]
        guard !head.contains(0), let text = String(validating: head, as: UTF8.self) else { return .malformed }
        let lines = text.split(separator: "\r\n", omittingEmptySubsequences: false)
        guard lines.count - 1 <= maxHeaders else { return .tooLarge }
        let parts = lines[0].split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[2].hasPrefix("HTTP/1."), parts[1].hasPrefix("/") else { return .malformed }
        var host: String?
        var fields: [Field] = []
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { return .malformed }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingWhitespace
            guard name == "host" else {
                fields.append(Field(name: name, value: value))
                continue
            }
            // Two Host headers are a classic request-smuggling trick (RFC 9112 3.2): refuse them.
            guard host == nil else { return .malformed }
            host = value.lowercased()
        }
        let target = parts[1]
        let q = target.firstIndex(of: "?")
        return .request(HTTPRequestHead(method: String(parts[0]), path: String(target[..<(q ?? target.endIndex)]),
                                        query: q.map { target[target.index(after: $0)...] } ?? "", host: host, fields: fields))
    }

    package static func headEnd(_ b: [UInt8]) -> Int? {
        guard b.count >= 4 else { return nil }
        for i in 0...(b.count - 4) where b[i] == 13 && b[i + 1] == 10 && b[i + 2] == 13 && b[i + 3] == 10 { return i }
        return nil
    }
}
