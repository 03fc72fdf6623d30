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
