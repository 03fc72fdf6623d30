import SignInBase
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// The agent's log (`AgentProtocol.logPath`): each request served or refused on a forwarded socket, and each
/// connection refused (time, remote host, account, token kind; never a token), kept under `AgentProtocol.logLimit`.
struct AgentLog: Sendable {
    let path: String

    /// A line about a forwarded session.
    func session(_ s: ForwardedSession, _ what: String) {
        Self.append(path, "session \(s.id) from \(s.host): \(what)")
    }

    /// A connection the loopback server refused.
    func refused(_ reason: String) { Self.append(path, "refused: \(reason)") }

    static func append(_ path: String, _ line: String) {
        let folder = PathName(path: path).deletingLastPathComponent
        _ = Directory.create(folder)
        // Bounded: past the limit the log moves to agent.log.1 (replacing the one before), so a flood of refused
        // requests costs at most twice the limit on disk.
        if case .success(let st) = Posix.status(ofLink: path), st.size >= AgentProtocol.logLimit { Posix.rename(path, path + ".1") }
        let fd = Posix.open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { return }
        defer { Posix.close(fd) }
        var bytes = Array((Date().formatted(.iso8601) + " " + line.withoutControlCharacters + "\n").utf8)
        _ = bytes.withUnsafeMutableBytes { Posix.write(fd, $0.baseAddress, $0.count) }
    }
}
