import SignInKit

#if canImport(Glibc)
import Glibc
#endif

/// `signin help [COMMAND] [--man]`.
struct HelpCommand: SignInCommand {
    static let manOption = OptionSpec("--man", "Print the manual page (roff) instead")
    static let spec = CommandSpec(of: Self.self, options: [HelpCommand.manOption], summary: "Help for a command (signin help COMMAND)", details: "Prints help for COMMAND, or the list of commands.",
                                  usageTail: " [COMMAND]", readsConfiguration: false, takesJSON: false, takesArguments: true)

    let man: Bool
    let command: (any SignInCommand.Type)?

    init(_ a: Arguments, _ env: [String: String]) throws(UsageError) {
        man = a.has(Self.manOption)
        if let name = a.positional.first {
            guard let found = Commands.named(name) else {
                throw UsageError("no command \"\(name)\"" + (Commands.suggestion(for: name).map { " (did you mean `\($0)`?)" } ?? ""))
            }
            command = found
        } else {
            command = nil
        }
    }

    func run(_ r: CommandRun) throws -> ExitCode {
        let io = r.io
        if man { io.out(Help.manPage) } else if let command { io.out(Help.text(for: command.spec)) } else { io.out(Help.general) }
        return .success
    }
}
