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
