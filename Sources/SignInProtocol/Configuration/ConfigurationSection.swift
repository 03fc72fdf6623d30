import SignInBase
import FoundationEssentials

/// A provider family's part of the configuration file: the keys it owns, read by its own code (Google's
/// `impersonate_service_account` in SignInGoogle, AWS's `aws_region` in SignInAWS). The file is read once; the core
/// reads its keys, each registered section its own, and a key nobody owns is refused with a suggestion.
public protocol ConfigurationSection: DefaultedValue {
    /// The file's keys this section reads.
    static var keys: [String] { get }
    /// The section of a configuration that gives none of its keys (or is built in code).
    init()
    /// Reads the section's keys; every error names the file and the field.
    init(from fields: ConfigurationFields) throws(SignInError)
    /// The rules of the provider this section's family knows as `issuer` (default: none).
    static func provider(issuer: String) -> ProviderRules?
    /// The issuer of a configuration that names none, when this family's provider is the default (default: nil).
    static var defaultIssuer: String? { get }
    /// Parameters this section adds to the authorization request (Google's `hd` for `hosted_domain`; default none).
    var authorizationParameters: [(String, String)] { get }
    /// Why a verified ID token's claims do not meet this section (Google's `hd` claim against `hosted_domain`), or
    /// nil (default).
    func idTokenProblem(_ claims: [String: JSONValue]) -> String?
    /// Why a stored sign-in's profile (verified when it was made, perhaps under another configuration) does not meet
    /// this section now, or nil (default): asked on every read of the store, the cached path too, so a rule added to
    /// the file holds for a sign-in made before it.
    func storedProfileProblem(_ profile: SignInProfile) -> String?
}

/// The configuration file's fields as a section reads them: typed reads whose errors name the file and the field.
public struct ConfigurationFields: Sendable {
    /// The file's object, every key.
    public let object: [String: JSONValue]
    /// The file, for error messages.
    public let sourcePath: String

    public init(object: [String: JSONValue], sourcePath: String) {
        self.object = object
        self.sourcePath = sourcePath
    }

    /// The field's value, nil when it is missing or `null`.
    public subscript(_ key: String) -> JSONValue? {
        guard let v = object[key], v != .null else { return nil }
        return v
    }

    /// A `.configInvalid` naming the file and `field`.
    public func fail(_ field: String?, _ reason: String) -> SignInError { .configInvalid(file: sourcePath, field: field, reason: reason) }

    /// A non-empty string, or nil when the field is missing.
    public func string(_ key: String) throws(SignInError) -> String? {
        guard let v = self[key] else { return nil }
        guard let s = v.string else { throw fail(key, "must be a string") }
        guard !s.isEmpty else { throw fail(key, "must not be empty") }
        return s
    }

    /// An endpoint URL (https, or http to this machine), or nil when the field is missing.
    public func url(_ key: String) throws(SignInError) -> String? {
        guard let s = try string(key) else { return nil }
        if let problem = EndpointURL.problem(s) { throw fail(key, problem) }
        return s
    }
}

/// The sections a configuration holds, each found by its type; a section never read or set is its `init()`.
public typealias ConfigurationSections = DefaultedValues

extension ConfigurationSection {
    /// The rules of the provider this section's family knows as `issuer` (in any spelling the provider uses), or
    /// nil: a family brings its provider's rules here (Google's family: accounts.google.com), the core names none.
    public static func provider(issuer: String) -> ProviderRules? { nil }
    /// The issuer of a configuration that names none, when this family's provider is the default one; else nil.
    public static var defaultIssuer: String? { nil }
    /// No parameters of its own.
    public var authorizationParameters: [(String, String)] { [] }
    /// Any ID token will do.
    public func idTokenProblem(_ claims: [String: JSONValue]) -> String? { nil }
    /// Any stored sign-in will do.
    public func storedProfileProblem(_ profile: SignInProfile) -> String? { nil }
}

extension SignInConfiguration {
    /// The sections the configuration file gave keys of (or code set), each a family's part of the sign-in.
    package var givenSections: [any ConfigurationSection] { sections.all.compactMap { $0 as? any ConfigurationSection } }
}

/// The providers a configuration's families know by name: the sections it was read with (or that `SignInClient`
/// gave a configuration built in code), asked in order.
package struct ProviderFamilies: Sendable, Equatable {
    let sections: [any ConfigurationSection.Type]

    package init(_ sections: [any ConfigurationSection.Type]) { self.sections = sections }

    /// The rules a family names for `issuer`, or nil.
    package func rules(for issuer: String) -> ProviderRules? {
        for section in sections { if let rules = section.provider(issuer: issuer) { return rules } }
        return nil
    }

    /// Whether no family was given (a configuration built in code, before a `SignInClient` took it).
    package var isEmpty: Bool { sections.isEmpty }

    /// The first family's default issuer, or nil.
    package var defaultIssuer: String? { sections.lazy.compactMap { $0.defaultIssuer }.first }

    package static func == (a: ProviderFamilies, b: ProviderFamilies) -> Bool {
        a.sections.map { ObjectIdentifier($0) } == b.sections.map { ObjectIdentifier($0) }
    }
}
