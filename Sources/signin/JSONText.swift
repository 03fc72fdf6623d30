import SignInKit

/// A minimal JSON writer for `--json` output (keys sorted, strings escaped).
enum JSONValueOut {
    case string(String), int(Int), bool(Bool), null, array([JSONValueOut]), object([String: JSONValueOut])
}

enum JSONText {
    static func object(_ o: [String: JSONValueOut]) -> String { render(.object(o)) }

    static func render(_ v: JSONValueOut) -> String {
        switch v {
        case .string(let s): return quote(s)
        case .int(let n): return String(n)
        case .bool(let b): return b ? "true" : "false"
        case .null: return "null"
        case .array(let a): return "[" + a.map(render).joined(separator: ",") + "]"
        case .object(let o): return "{" + o.keys.sorted().map { quote($0) + ":" + render(o[$0]!) }.joined(separator: ",") + "}"
        }
    }

    static func quote(_ s: String) -> String {
        var r = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": r += "\\\""
            case "\\": r += "\\\\"
            case "\n": r += "\\n"
            case "\r": r += "\\r"
            case "\t": r += "\\t"
            case _ where u.value < 0x20:
                let h = String(u.value, radix: 16)
                r += "\\u" + String(repeating: "0", count: 4 - h.count) + h
            default: r.unicodeScalars.append(u)
            }
        }
        return r + "\""
    }

    static func opt(_ s: String?) -> JSONValueOut { s.map { .string($0) } ?? .null }

    static func profile(_ p: Profile) -> JSONValueOut {
        .object([
            "sub": .string(p.userID), "name": opt(p.name), "given_name": opt(p.givenName), "family_name": opt(p.familyName),
            "email": opt(p.email), "email_verified": p.emailVerified.map { .bool($0) } ?? .null, "picture": opt(p.pictureURL),
            "hd": opt(p.hostedDomain),
        ])
    }
}
