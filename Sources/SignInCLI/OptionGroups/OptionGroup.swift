import SignInKit

/// Options several commands share, as swift-argument-parser's `@OptionGroup`: the group states its options as data
/// (`options`, beside the initialiser that reads them) and reads them once, into a value the command keeps; a command
/// that takes the group lists `Group.options` among its own (`CommandSpec.options`).
protocol OptionGroup: Sendable {
    /// The options the group reads, in the order help shows them.
    static var options: [OptionSpec] { get }
    /// The group's values from `a`, checked.
    init(_ a: Arguments) throws(UsageError)
}
