#if canImport(Glibc)
import Glibc
#endif

/// The error a system call failed with, read the moment it returned (as swift-nio's `System.swift` does): code
/// outside this folder never reads `errno`, which the next call (an allocation, a log line) may have changed.
package struct SystemError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The errno value.
    package let code: Int32
    package init(code: Int32) { self.code = code }
    /// The error as `strerror` words it.
    package var description: String { FileIO.errnoText(code) }
    /// The file or folder is not there (ENOENT).
    package var isMissing: Bool { code == ENOENT }
    /// Read now: only inside this folder, right after the call that failed.
    static var current: SystemError { SystemError(code: errno) }
}

/// What `stat` says of a path, typed: what the rest of signin asks of it.
package struct FileStatus: Sendable, Equatable {
    package enum Kind: Sendable, Equatable { case file, directory, symbolicLink, socket, other }
    package let kind: Kind
    /// The owner's uid.
    package let owner: uid_t
    /// The permission bits (`0o777` and the set-id and sticky bits).
    package let permissions: mode_t
    package let size: Int
    package let device: UInt64
    package let inode: UInt64
    /// The last change of the file's contents, in seconds and nanoseconds.
    package let modified: (seconds: Int, nanoseconds: Int)
    /// Whether this process's (effective) user owns it: the first half of "ours and private", asked of the store's
    /// folder, its key file, the agent's folder and a socket before any of them is trusted.
    package var isOurs: Bool { owner == geteuid() }
    /// Whether no other user has any permission on it (no group or other bits): the other half.
    package var isPrivate: Bool { permissions & 0o077 == 0 }

    init(_ st: Glibc.stat) {
        switch st.st_mode & S_IFMT {
        case S_IFREG: kind = .file
        case S_IFDIR: kind = .directory
        case S_IFLNK: kind = .symbolicLink
        case S_IFSOCK: kind = .socket
        default: kind = .other
        }
        owner = st.st_uid
        permissions = st.st_mode & 0o7777
        size = Int(st.st_size)
        device = UInt64(st.st_dev)
        inode = UInt64(st.st_ino)
        modified = (Int(st.st_mtim.tv_sec), Int(st.st_mtim.tv_nsec))
    }

    package static func == (a: FileStatus, b: FileStatus) -> Bool {
        a.kind == b.kind && a.owner == b.owner && a.permissions == b.permissions && a.size == b.size && a.device == b.device
            && a.inode == b.inode && a.modified == b.modified
    }
}

extension Posix {
    /// `lstat(2)` of `path` (a symbolic link is itself), or the error it failed with.
    package static func status(ofLink path: String) -> Result<FileStatus, SystemError> {
        var st = Glibc.stat()
        return lstat(path, &st) == 0 ? .success(FileStatus(st)) : .failure(.current)
    }

    /// `stat(2)` of `path` (a symbolic link followed), or the error it failed with.
    package static func status(of path: String) -> Result<FileStatus, SystemError> {
        var st = Glibc.stat()
        return Posix.stat(path, &st) == 0 ? .success(FileStatus(st)) : .failure(.current)
    }

    /// Removes `path`; one that is not there is no error ("unlink unless ENOENT", written once). True when it removed one.
    @discardableResult
    package static func removeFile(_ path: String) throws(SystemError) -> Bool {
        if unlink(path) == 0 { return true }
        let e = SystemError.current
        if e.isMissing { return false }
        throw e
    }

    /// `rename(2)`; one whose source is not there is no error when `missingIsFine`.
    package static func renameFile(_ from: String, _ to: String, missingIsFine: Bool = false) throws(SystemError) {
        if rename(from, to) == 0 { return }
        let e = SystemError.current
        if missingIsFine && e.isMissing { return }
        throw e
    }

    /// `link(2)`; false (no error) when `to` exists already.
    package static func linkFile(_ from: String, _ to: String) throws(SystemError) -> Bool {
        if link(from, to) == 0 { return true }
        let e = SystemError.current
        if e.code == EEXIST { return false }
        throw e
    }

    /// Whether process `pid` has ended (`kill(pid, 0)` says ESRCH); a process of another user is alive.
    package static func processHasEnded(_ pid: pid_t) -> Bool {
        kill(pid, 0) != 0 && errno == ESRCH
    }

    /// `socket(2)`: the descriptor, or the error.
    package static func openSocket(_ domain: Int32, _ type: Int32, _ proto: Int32) -> Result<Int32, SystemError> {
        let fd = Glibc.socket(domain, type, proto)
        return fd >= 0 ? .success(fd) : .failure(.current)
    }

    /// `rc` of a call just made (`bind`, `listen`, `connect`: 0 on success): nil, or the error it failed with. Call
    /// it at once, as `Posix.failure(of: Posix.bind(...))`: nothing may run between the call and this read.
    package static func failure(of rc: Int32) -> SystemError? { rc == 0 ? nil : .current }

    /// Waits up to `milliseconds` (-1: for ever) until one of `fds` can be read (or has ended): for each, whether
    /// it can; all false at the timeout; or the error `poll(2)` failed with (EINTR retried).
    package static func readable(_ fds: [Int32], milliseconds: Int32) -> Result<[Bool], SystemError> {
        var polled = fds.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        let n = poll(&polled, nfds_t(polled.count), milliseconds)
        guard n >= 0 else { return .failure(.current) }
        return .success(polled.map { $0.revents != 0 })
    }

    /// Whether `fd` can be read (or has ended) within `milliseconds`; false at the timeout or on an error.
    package static func isReadable(_ fd: Int32, milliseconds: Int32) -> Bool {
        (try? readable([fd], milliseconds: milliseconds).get())?.first ?? false
    }

    /// `open(2)` (EINTR retried): the descriptor, or the error.
    package static func opening(_ path: String, _ flags: Int32, _ mode: mode_t = 0) -> Result<Int32, SystemError> {
        let fd = open(path, flags, mode)
        return fd >= 0 ? .success(fd) : .failure(.current)
    }

    /// `read(2)` into `buffer`: the count read (0 at the end), or the error (EAGAIN and EINTR included: the caller
    /// decides what they mean).
    package static func reading(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Result<Int, SystemError> {
        let n = Glibc.read(fd, buffer, count)
        return n >= 0 ? .success(n) : .failure(.current)
    }
}
