import SignInBase

/// A `WWW-Authenticate` header read as RFC 9110 11.6.1 writes it: one or more challenges, each a scheme and its
/// auth-params (`name=token` or `name="quoted string"`, in any order, separated by commas), or a token68. What RFC
/// 6750 3 (`error`, `error_description`, `scope`) and RFC 9728 5.1 (`resource_metadata`) put in a Bearer or DPoP
/// challenge is read from it.
public struct WWWAuthenticate: Sendable, Equatable {
    /// One challenge: its scheme (as sent) and its parameters (names in lower case, values unquoted).
    public struct Challenge: Sendable, Equatable {
        public var scheme: String
        public var parameters: [String: String]

        public init(scheme: String, parameters: [String: String] = [:]) {
            self.scheme = scheme
            self.parameters = parameters
        }

        /// RFC 6750's `error` (`invalid_token`, `insufficient_scope`, `invalid_request`), if any.
        public var error: String? { parameters["error"] }
        /// The scopes the challenge names (`scope`, space-separated), if any.
        public var scopes: [String]? { parameters["scope"].map { $0.split(separator: " ").map(String.init) } }
        /// RFC 9728's `resource_metadata`: where the API's protected resource metadata is.
        public var resourceMetadata: String? { parameters["resource_metadata"] }
    }

    /// The challenges, in the header's order.
    public var challenges: [Challenge]

    /// Parses `header` (several headers may be joined with commas, as RFC 9110 5.3 allows). Malformed parts are
    /// skipped rather than guessed at.
    public init(_ header: String) {
        challenges = Self.parse(Array(header.utf8))
    }

    /// The first Bearer or DPoP challenge (the token schemes signin speaks), or nil: a `Basic` (or any other scheme's)
    /// challenge says nothing about a token, and its parameters (a `realm`, say) are never taken for one's.
    public var tokenChallenge: Challenge? {
        challenges.first { ["bearer", "dpop"].contains($0.scheme.lowercased()) }
    }

    private static func isTokenChar(_ c: UInt8) -> Bool {
        // RFC 9110 5.6.2 tchar.
        switch c {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): return true
        default: return Array("!#$%&'*+-.^_`|~".utf8).contains(c)
        }
    }

    private static func parse(_ b: [UInt8]) -> [Challenge] {
        var i = 0
        var out: [Challenge] = []
        func skipSpace() { while i < b.count, b[i] == 0x20 || b[i] == 0x09 { i += 1 } }
        func token() -> String? {
            let start = i
            while i < b.count, isTokenChar(b[i]) { i += 1 }
            return i > start ? String(decoding: b[start..<i], as: UTF8.self) : nil
        }
        func quoted() -> String? {
            guard i < b.count, b[i] == UInt8(ascii: "\"") else { return nil }
            i += 1
            var bytes: [UInt8] = []
            while i < b.count {
                let c = b[i]
                if c == UInt8(ascii: "\\"), i + 1 < b.count { bytes.append(b[i + 1]); i += 2; continue }
                if c == UInt8(ascii: "\"") { i += 1; return String(decoding: bytes, as: UTF8.self) }
                bytes.append(c)
                i += 1
            }
            return nil  // unterminated
        }
        while i < b.count {
            skipSpace()
            while i < b.count, b[i] == UInt8(ascii: ",") { i += 1; skipSpace() }
            guard let scheme = token() else {
                // Not a scheme: skip to the next comma.
                while i < b.count, b[i] != UInt8(ascii: ",") { i += 1 }
                continue
            }
            var challenge = Challenge(scheme: scheme)
            // Parameters until the next word that is followed by a space and no `=` (the next challenge's scheme).
            while i < b.count {
                skipSpace()
                let save = i
                guard let name = token() else {
                    if i < b.count, b[i] == UInt8(ascii: ",") { i += 1; continue }
                    // A token68 (`Basic dXNlcjpwYXNz`): taken as it is, and the challenge goes on.
                    while i < b.count, b[i] != UInt8(ascii: ",") { i += 1 }
                    continue
                }
                skipSpace()
                guard i < b.count, b[i] == UInt8(ascii: "=") else {
                    // A word without `=`: the next challenge begins (or a token68 of letters alone).
                    i = save
                    break
                }
                i += 1
                skipSpace()
                if i < b.count, b[i] == UInt8(ascii: "=") {
                    // token68 padding (`abc==`): not an auth-param.
                    while i < b.count, b[i] != UInt8(ascii: ",") { i += 1 }
                    continue
                }
                let value = quoted() ?? token() ?? ""
                let key = name.lowercased()
                if challenge.parameters[key] == nil { challenge.parameters[key] = value }
                skipSpace()
                if i < b.count, b[i] == UInt8(ascii: ",") { i += 1 }
            }
            out.append(challenge)
        }
        return out
    }
}
