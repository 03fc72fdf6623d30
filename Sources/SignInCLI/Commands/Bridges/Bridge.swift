import FoundationEssentials
import SignInKit

#if canImport(Glibc)
import Glibc
#endif

/// What a bridge answers its client: the text for standard output (the protocol's), a line for standard error, and
/// the exit code. A value, so a bridge's protocol has unit tests without spawning signin. (Every bridge gets its
/// token as `signin token` does, from a `TokenSource` and then `SignInClient.token`: one refresh for many parallel
/// callers, the same exit codes, no secret in an error, never a token in another process's arguments.)
struct BridgeAnswer: Equatable {
    var code: ExitCode = .success
    var output = ""
    var error: String?

    init(code: ExitCode = .success, output: String = "", error: String? = nil) {
        self.code = code
        self.output = output
        self.error = error
    }

    /// Writes it out and gives the exit code.
    func write(_ io: IOStreams) -> ExitCode {
        if !output.isEmpty { io.send(.output, output) }
        if let error { io.err(error) }
        return code
    }
}
