import SignInKit

/// Options several commands share, as swift-argument-parser's `@OptionGroup`: the group declares its options (a
/// command names the group in `CommandSpec.groups`, and help, the manual page, the completions and the argument
/// splitter read them from there) and parses them once, into a value the command keeps.
protocol OptionGroup: Sendable {
    /// The options the group declares.
    static var options: [OptionSpec] { get }
    /// The group's values from `a`, checked.
    init(_ a: Arguments) throws(UsageError)
}

/// `--min-ttl SECONDS` alone, for the bridges (whose consumers ask again when a token ends).
struct MinimumValidity: OptionGroup {
    static let options: [OptionSpec] = [.minTTL]
    let seconds: Int
    init(_ a: Arguments) throws(UsageError) { seconds = try a.int(.minTTL, default: 60, in: 0...86400) }
}

/// `--force-refresh` alone (`aws-credential-process`), with the token commands' hand-over rule.
struct RefreshChoice: OptionGroup {
    static let options: [OptionSpec] = [.forceRefresh]
    let forceRefresh: Bool
    init(_ a: Arguments) throws(UsageError) { forceRefresh = a.has(.forceRefresh) }
}
