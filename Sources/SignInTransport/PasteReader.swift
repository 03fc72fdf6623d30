#if canImport(Glibc)
import SignInBase
import Glibc
#endif

/// Reads whole lines from a descriptor the person pastes into (standard input), without blocking: the address
/// the browser ended at, for sign-ins whose browser is on another machine.
package final class PasteReader {
    package let fd: Int32
    private var buffer: [UInt8] = []
    private(set) var atEOF = false
    static let maxLineBytes = 16 * 1024

    package init(fd: Int32) { self.fd = fd }

    /// The complete, non-empty lines that arrived since the last call. Call when `fd` is readable.
    func readLines() -> [String] {
        var chunk = [UInt8](repeating: 0, count: 4096)
        let got: Int
        switch chunk.withUnsafeMutableBytes({ Posix.reading(fd, $0.baseAddress, $0.count) }) {
        case .success(let n) where n > 0: got = n
        case .success: atEOF = true; return []
        case .failure(let e):
            if e.code != EAGAIN && e.code != EINTR { atEOF = true }
            return []
        }
        buffer += chunk[0..<got]
        if buffer.count > Self.maxLineBytes { buffer.removeAll() }
        var lines: [String] = []
        while let nl = buffer.firstIndex(of: UInt8(ascii: "\n")) {
            let line = String(decoding: buffer[..<nl], as: UTF8.self).trimmingWhitespace
            buffer.removeSubrange(...nl)
            if !line.isEmpty { lines.append(line) }
        }
        return lines
    }
}
