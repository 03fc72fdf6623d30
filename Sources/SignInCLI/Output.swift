import SignInKit

#if canImport(Glibc)
import Glibc
#endif

/// A line on standard output, and one on standard error (`FileIO.writeAll`: plain write(2), unbuffered).
func out(_ s: String) { writeAll(1, s + "\n") }
func err(_ s: String) { writeAll(2, s + "\n") }
func writeAll(_ fd: Int32, _ s: String) { FileIO.writeAll(fd, s) }

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

/// Asks a yes/no question on standard error and reads the answer from standard input; only on a terminal.
func confirm(_ question: String) -> Bool {
    writeAll(2, question + " [y/N] ")
    guard let answer = readLine() else { return false }
    return ["y", "yes"].contains(answer.lowercased().trimmingWhitespace)
}


