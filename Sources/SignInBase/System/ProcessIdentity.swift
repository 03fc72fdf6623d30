import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// A process as the kernel tells it apart from a later one with the same number: its pid and its start time (in
/// clock ticks since boot, `/proc/PID/stat`'s 22nd field). A file named for its owner this way can be told to be
/// orphaned once that owner is gone, even after the pid was given to another process.
package struct ProcessIdentity: Equatable, Sendable {
    public let pid: Int32
    public let startTime: UInt64

    /// This process.
    public static var current: ProcessIdentity? { of(getpid()) }

    /// The running process `pid`, or nil when there is none (or `/proc` cannot be read).
    public static func of(_ pid: Int32) -> ProcessIdentity? {
        guard pid > 0, let data = try? FileIO.readStream(path: "/proc/\(pid)/stat", limit: 4096) else { return nil }
        // The command name (field 2) is in parentheses and may hold spaces or ')': the fields after it follow the last ')'.
        let text = String(decoding: data, as: UTF8.self)
        guard let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        // fields[0] is field 3 (state); the start time is field 22. A zombie (Z) or dead (X) process runs no more.
        guard fields.count > 19, fields[0] != "Z", fields[0] != "X", let start = UInt64(fields[19]) else { return nil }
        return ProcessIdentity(pid: pid, startTime: start)
    }

    /// `PID.START`, for a file name.
    public var tag: String { "\(pid).\(startTime)" }

    /// Reads `tag` back.
    public init?(tag: Substring) {
        let parts = tag.split(separator: ".")
        guard parts.count == 2, let pid = Int32(parts[0]), let start = UInt64(parts[1]) else { return nil }
        self.init(pid: pid, startTime: start)
    }

    public init(pid: Int32, startTime: UInt64) {
        self.pid = pid
        self.startTime = startTime
    }

    /// Whether this process is still the one running under its pid.
    public var isRunning: Bool { Self.of(pid) == self }

    /// Removes the files named `PREFIX` `PID.START` `-...` in `folder` whose owning process is no longer running.
    /// Files without an owner in their name, and another user's, are left alone.
    package static func removeOrphanedFiles(_ prefix: String, in folder: String) {
        for name in Directory.fileNames(folder) where name.hasPrefix(prefix) {
            let rest = name.dropFirst(prefix.count)
            guard let dash = rest.firstIndex(of: "-"), let owner = ProcessIdentity(tag: rest[..<dash]), !owner.isRunning else { continue }
            var st = stat()
            let path = folder + "/" + name
            guard lstat(path, &st) == 0, st.st_uid == geteuid(), (st.st_mode & S_IFMT) == S_IFREG else { continue }
            unlink(path)
        }
    }
}

