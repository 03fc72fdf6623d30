/// JSON to write, keys sorted and strings escaped (control characters as `\u` escapes): the command line's
/// `--json` output, the agent's and the metadata server's answers, and the bodies sent to Google's APIs. The
/// reading side is `JSONValue`.
package enum JSONValueOut: Sendable {
    case string(String), int(Int), bool(Bool), null, array([JSONValueOut]), object([String: JSONValueOut])
    /// JSON text already encoded (a token's claims, passed through as the provider wrote them).
    case raw(String)

    /// The value as JSON text.
    public var text: String {
        switch self {
        case .string(let s): return Self.quote(s)
        case .int(let n): return String(n)
        case .bool(let b): return b ? "true" : "false"
        case .null: return "null"
        case .raw(let text): return text
        case .array(let a): return "[" + a.map(\.text).joined(separator: ",") + "]"
        case .object(let o): return "{" + o.keys.sorted().map { Self.quote($0) + ":" + o[$0]!.text }.joined(separator: ",") + "}"
        }
    }

    /// A string as a JSON string literal.
    public static func quote(_ s: String) -> String {
        var r = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": r += "\\\""
            case "\\": r += "\\\\"
            case "\n": r += "\\n"
            case "\r": r += "\\r"
            case "\t": r += "\\t"
            case _ where u.value < 0x20 || (0x7F...0x9F).contains(u.value):
                let h = String(u.value, radix: 16)
                r += "\\u" + String(repeating: "0", count: 4 - h.count) + h
            default: r.unicodeScalars.append(u)
            }
        }
        return r + "\""
    }

    /// An array of strings.
    public static func strings(_ a: [String]) -> JSONValueOut { .array(a.map { .string($0) }) }
}
