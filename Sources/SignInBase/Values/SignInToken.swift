import FoundationEssentials

/// A token and when it stops being valid (nil when the provider did not say).
public struct SignInToken: Sendable, Equatable, CustomStringConvertible {
    /// The token itself. Treat it as a password: do not log it.
    public let value: String
    /// When it stops being valid, if known.
    public let expirationDate: Date?

    /// A token as a stand-in user in a program's tests hands it out.
    public init(value: String, expirationDate: Date?) {
        self.value = value
        self.expirationDate = expirationDate
    }

    /// Never the token itself, so a stray `print` cannot leak it; use `value` on purpose.
    public var description: String { "Token(\(value.count) characters, expires \(expirationDate.map { "\($0)" } ?? "unknown"))" }
}
