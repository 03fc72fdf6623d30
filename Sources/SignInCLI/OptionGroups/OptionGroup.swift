import SignInKit

/// Options several commands share, as swift-argument-parser's `@OptionGroup`: the group reads its options once, into
/// a value the command keeps, and reading them declares them (a command takes the group by reading it in its
/// initialiser, which `Arguments.declaring` runs once for help, the manual page, the completions and the argument
/// splitter).
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
