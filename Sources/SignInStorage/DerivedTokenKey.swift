import SignInBase
import FoundationEssentials

/// What a derived token in an entry's cache was got for: its kind (the person's token for one API, a service
/// account's, an AWS role's keys, ...) and the parts that tell two of a kind apart. The one encoding of a cache key:
/// an entry keeps `encoded` (`kind|parts`), as stores written before this type have it, so they are read unchanged.
public struct DerivedTokenKey: Hashable, Sendable, CustomStringConvertible {
    /// A kind of derived token, named as the store spells it, and how its parts are joined there.
    public struct Kind: Hashable, Sendable {
        /// The name before `|` in the stored key (`resource`, `exchange`, `access`, `aws`, ...).
        public let name: String
        /// What joins the parts after `|`.
        public let separator: String

        /// A kind of a provider family's own (each family declares its kinds beside the code that mints them).
        public init(_ name: String, separator: String = " ") {
            precondition(!name.contains("|"), "a derived token's kind has no |")
            self.name = name
            self.separator = separator
        }

        /// The person's access token for one API alone (RFC 8707): the parts are the resource.
        public static let resource = Kind("resource")
        /// The person's access token exchanged for an audience (RFC 8693): the audience and the resource.
        public static let exchange = Kind("exchange", separator: "|")
    }

    public let kind: Kind
    public let parts: [String]

    public init(_ kind: Kind, _ parts: [String]) {
        self.kind = kind
        self.parts = parts
    }

    /// The person's access token for `resource` alone.
    public static func resource(_ resource: String) -> DerivedTokenKey { DerivedTokenKey(.resource, [resource]) }
    /// The person's access token exchanged for `audience` (with `resource`, when the exchange named one).
    public static func exchange(audience: String?, resource: String?) -> DerivedTokenKey {
        DerivedTokenKey(.exchange, [audience ?? "", resource ?? ""])
    }

    /// The key of the person's token for one API: exchanged when an `audience` is named, else for `resource` alone;
    /// nil when neither is (the person's own token).
    public static func target(audience: String?, resource: String?) -> DerivedTokenKey? {
        if audience != nil { return .exchange(audience: audience, resource: resource) }
        return resource.map { .resource($0) }
    }

    /// The form an entry keeps.
    public var encoded: String { kind.name + "|" + parts.joined(separator: kind.separator) }

    public var description: String { kind.name }
}

extension StoredCredentials {
    /// The cached derived token for `key`, expired or not.
    public func derivedToken(_ key: DerivedTokenKey) -> DerivedToken? {
        let encoded = key.encoded
        return derivedTokens?.first { $0.key == encoded }
    }

    /// Drops the token kept for `key`; false when none was.
    package mutating func forget(_ key: DerivedTokenKey) -> Bool {
        let encoded = key.encoded
        guard derivedTokens?.contains(where: { $0.key == encoded }) == true else { return false }
        derivedTokens?.removeAll { $0.key == encoded }
        return true
    }

    /// Keeps `token` for `key` in place of the one it replaces, dropping expired ones and keeping the newest 32.
    package mutating func keep(_ key: DerivedTokenKey, value: String, expiry: Date, unrestricted: Bool? = nil, now: Date = Date()) {
        let encoded = key.encoded
        var kept = (derivedTokens ?? []).filter { $0.key != encoded && $0.expiry > now }
        kept.append(DerivedToken(key: encoded, value: value, expiry: expiry, unrestricted: unrestricted, obtained: now))
        derivedTokens = Array(kept.suffix(32))
    }
}
