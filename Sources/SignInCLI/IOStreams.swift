import SignInKit
import Synchronization

/// Where a command's text goes, as gh's IOStreams: this process's standard output and error (`FileIO.writeAll`:
/// plain write(2), unbuffered), or, in a test, memory, so that a command's output is tested without a process. Every
/// command writes through the one it is given (`Context.io`, `AgentTokens.io`). Two things write elsewhere, on
/// purpose: `Passphrase` asks on `/dev/tty` (a prompt must reach the person even when standard error is redirected),
/// and `signin mcp`'s bridge writes JSON-RPC messages to standard output itself (`MCPStdioBridge`: whole lines from
/// any thread, one at a time).
struct IOStreams: Sendable {
    /// The two streams a command writes, by their descriptors.
    enum Stream: Int32, Sendable {
        case output = 1, error = 2
    }

    /// Writes `text`, as it is, to `stream`.
    let send: @Sendable (_ stream: Stream, _ text: String) -> Void

    /// This process's standard output and error.
    static let standard = IOStreams { stream, text in FileIO.writeAll(stream.rawValue, text) }

    /// A line on standard output.
    func out(_ s: String) { send(.output, s + "\n") }
    /// A line on standard error.
    func err(_ s: String) { send(.error, s + "\n") }

    /// Asks a yes/no question on standard error and reads the answer from standard input; only on a terminal.
    func confirm(_ question: String) -> Bool {
        send(.error, question + " [y/N] ")
        guard let answer = readLine() else { return false }
        return ["y", "yes"].contains(answer.lowercased().trimmingWhitespace)
    }

    /// Streams that keep what is written, for a test: `captured.output` and `captured.error`.
    static func capturing() -> (IOStreams, CapturedOutput) {
        let captured = CapturedOutput()
        return (IOStreams { stream, text in captured.append(stream, text) }, captured)
    }
}

/// What `IOStreams.capturing()` kept.
final class CapturedOutput: Sendable {
    private let texts = Mutex<(output: String, error: String)>(("", ""))
    var output: String { texts.withLock { $0.output } }
    var error: String { texts.withLock { $0.error } }
    fileprivate func append(_ stream: IOStreams.Stream, _ text: String) {
        texts.withLock { if stream == .output { $0.output += text } else { $0.error += text } }
    }
}

/// Reads one line from standard input (for questions on a terminal and for `git-credential`), without
/// Foundation's buffering: byte by byte, so nothing after the line is consumed.
func readLine(fd: Int32 = 0, limit: Int = 64 * 1024) -> String? {
    var bytes: [UInt8] = []
    var b: UInt8 = 0
    while bytes.count < limit {
        let n = Posix.read(fd, &b, 1)
        if n <= 0 { return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self) }
        if b == UInt8(ascii: "\n") { break }
        bytes.append(b)
    }
    if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
    return String(decoding: bytes, as: UTF8.self)
}
