import SignInKit

#if canImport(Glibc)
import Glibc
#endif

/// `signin completion bash|zsh|fish`: the completion script.
struct CompletionCommand: SignInCommand {
    static let spec = CommandSpec(of: Self.self, options: [], summary: "Print the shell completion script for bash, zsh or fish",
                                  details: "Prints a completion script: `source <(signin completion bash)`, or see `signin --help`.",
                                  usageTail: " bash|zsh|fish", positionalWords: ["bash", "zsh", "fish"], readsConfiguration: false, takesJSON: false, takesArguments: true)

    let script: String

    init(_ a: Arguments, _ env: [String: String]) throws(UsageError) {
        guard let shell = a.positional.first, a.positional.count == 1, let script = Completion.script(for: shell) else {
            throw UsageError("`signin completion` takes bash, zsh or fish")
        }
        self.script = script
    }

    func run(_ r: CommandRun) throws -> ExitCode {
        let io = r.io
        io.out(script)
        return .success
    }
}
