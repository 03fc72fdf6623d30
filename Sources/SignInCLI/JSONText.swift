import FoundationEssentials
import SignInKit

enum JSONText {
    static func object(_ o: [String: JSONValueOut]) -> String { render(.object(o)) }

    /// A parsed document back as text (another program's file that signin edits: docker's config.json).
    static func value(_ v: JSONValue) -> JSONValueOut {
        switch v {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .number(let n): return v.wholeNumber.map { .int($0) } ?? .raw("\(n)")
        case .string(let s): return .string(s)
        case .array(let a): return .array(a.map(value))
        case .object(let o): return .object(o.mapValues(value))
        }
    }

    static func render(_ v: JSONValueOut) -> String { v.text }

    /// An object for a person to read and edit: one member a line, in `order` (then the rest, sorted).
    static func pretty(_ o: [String: JSONValueOut], order: [String]) -> String {
        let keys = order.filter { o[$0] != nil } + o.keys.filter { !order.contains($0) }.sorted()
        func value(_ v: JSONValueOut) -> String {
            if case .array(let a) = v { return "[" + a.map(render).joined(separator: ", ") + "]" }
            return render(v)
        }
        return "{\n" + keys.map { "  \(quote($0)): \(value(o[$0]!))" }.joined(separator: ",\n") + "\n}\n"
    }

    static func quote(_ s: String) -> String { JSONValueOut.quote(s) }

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
            "identity": .string(u.identity.rawValue),
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
