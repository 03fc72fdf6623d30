import FoundationEssentials
@_spi(CLI) import SignInKit

/// A minimal JSON writer for `--json` output (keys sorted, strings escaped).
enum JSONValueOut {
    case string(String), int(Int), bool(Bool), null, array([JSONValueOut]), object([String: JSONValueOut])
    /// JSON text already encoded (a token's claims, passed through as the provider wrote them).
    case raw(String)
}

enum JSONText {
    static func object(_ o: [String: JSONValueOut]) -> String { render(.object(o)) }

    /// A parsed document back as text (another program's file that signin edits: docker's config.json).
    static func value(_ v: JSONValue) -> JSONValueOut {
        switch v {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .number(let n): return n.rounded() == n && abs(n) < 1e15 ? .int(Int(n)) : .raw("\(n)")
        case .string(let s): return .string(s)
        case .array(let a): return .array(a.map(value))
        case .object(let o): return .object(o.mapValues(value))
        }
    }

    static func render(_ v: JSONValueOut) -> String {
        switch v {
        case .string(let s): return quote(s)
        case .int(let n): return String(n)
        case .bool(let b): return b ? "true" : "false"
        case .null: return "null"
        case .raw(let text): return text
        case .array(let a): return "[" + a.map(render).joined(separator: ",") + "]"
        case .object(let o): return "{" + o.keys.sorted().map { quote($0) + ":" + render(o[$0]!) }.joined(separator: ",") + "}"
        }
    }

    /// An object for a person to read and edit: one member a line, in `order` (then the rest, sorted).
    static func pretty(_ o: [String: JSONValueOut], order: [String]) -> String {
        let keys = order.filter { o[$0] != nil } + o.keys.filter { !order.contains($0) }.sorted()
        func value(_ v: JSONValueOut) -> String {
            if case .array(let a) = v { return "[" + a.map(render).joined(separator: ", ") + "]" }
            return render(v)
        }
        return "{\n" + keys.map { "  \(quote($0)): \(value(o[$0]!))" }.joined(separator: ",\n") + "\n}\n"
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
            case _ where u.value < 0x20 || (0x7F...0x9F).contains(u.value):
                let h = String(u.value, radix: 16)
                r += "\\u" + String(repeating: "0", count: 4 - h.count) + h
            default: r.unicodeScalars.append(u)
            }
        }
        return r + "\""
    }

    static func opt(_ s: String?) -> JSONValueOut { s.map { .string($0) } ?? .null }

    /// One account, in the vocabulary every command's `--json` shares (README lists the fields).
    static func user(_ u: SignInUser) -> [String: JSONValueOut] {
        [
            "signed_in": .bool(u.grantEndedAt == nil), "issuer": .string(u.issuer), "current": .bool(u.isCurrent),
            "profile": profile(u.profile), "granted_scopes": .array(u.grantedScopes.map { .string($0) }),
            "access_token_expires_at": u.accessToken?.expirationDate.map { .string(iso8601($0)) } ?? .null,
            "access_token_rejected": .bool(u.accessTokenRejected),
            "id_token_expires_at": u.idToken?.expirationDate.map { .string(iso8601($0)) } ?? .null,
            "has_refresh_token": .bool(u.refreshToken != nil),
            "grant_ended_at": u.grantEndedAt.map { .string(iso8601($0)) } ?? .null,
        ]
    }

    /// The claims of a JWT, decoded without verification (it was verified when it was stored).
    static func claims(of jwt: String) -> JSONValueOut {
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let data = Base64URL.decode(parts[1]), let raw = String(data: data, encoding: .utf8), raw.hasPrefix("{") else { return .null }
        return .raw(raw)
    }

    static func profile(_ p: SignInProfile) -> JSONValueOut {
        .object([
            "sub": .string(p.userID), "name": opt(p.name), "given_name": opt(p.givenName), "family_name": opt(p.familyName),
            "email": opt(p.email), "email_verified": p.emailVerified.map { .bool($0) } ?? .null, "picture": opt(p.picture),
            "hd": opt(p.hostedDomain),
        ])
    }
}
