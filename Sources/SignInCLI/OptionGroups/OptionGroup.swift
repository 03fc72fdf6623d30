import SignInKit

/// Options several commands share, as swift-argument-parser's `@OptionGroup`: the group declares its options (a
/// command names the group in `CommandSpec.groups`, and help, the manual page, the completions and the argument
/// splitter read them from there) and parses them once, into a value the command keeps.
protocol OptionGroup: Sendable {
    /// The group's values from `a`, checked. Reading an option declares it (`Arguments`): the group's options are
    /// the ones this reads.
    init(_ a: Arguments) throws(UsageError)
}

extension OptionGroup {
    /// The options the group declares: those its initialiser reads, in order.
    static var options: [OptionSpec] {
        let a = Arguments.declaring()
        _ = try? Self(a)
        return a.declaredOptions
    }
}
