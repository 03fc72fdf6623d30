import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Small, careful file reads and writes (no symlink following where it matters, atomic replace).
package enum FileIO {
    package struct Failure: Error {
        package var reason: String
        /// Set when the file does not exist, which callers often treat as "nothing stored" rather than an error.
        package var notFound = false

        package init(reason: String, notFound: Bool = false) {
            self.reason = reason
            self.notFound = notFound
        }
    }

    package static func errnoText(_ e: Int32) -> String { String(cString: strerror(e)) }
    /// The errno just set, in words: only in this folder, right after the call that failed.
    static func errnoText() -> String { errnoText(errno) }

    /// A one-time notice on standard error (the library's only direct output; never a secret).
    package static func writeStandardError(_ text: String) { writeAll(2, text) }

    /// All of `text` to `fd` (standard output, standard error, a terminal), a short write continued, EINTR retried;
    /// a descriptor that will take no more (a closed pipe) ends it quietly. Plain write(2), without Foundation's
    /// buffering, so a script reading signin sees every line as it is written.
    package static func writeAll(_ fd: Int32, _ text: String) {
        if fd == 1 || fd == 2 { HandOverPoint.wrote(fd == 1 ? "to standard output" : "to standard error") }
        var bytes = Array(text.utf8)
        var off = 0
        while off < bytes.count {
            let n = SystemCall.retrying { bytes.withUnsafeMutableBytes { write(fd, $0.baseAddress! + off, $0.count - off) } }
            if n <= 0 { return }
            off += n
        }
    }

    /// Reads a whole regular file of at most `limit` bytes. `verify` sees the opened file's status (owner, mode)
    /// and returns why it may not be used, if so: checked on the descriptor that is read, not on the path before.
    package static func read(path: String, limit: Int, noFollow: Bool = false, verify: (FileStatus) -> String? = { _ in nil }) throws(Failure) -> Data {
        let fd = open(path, O_RDONLY | O_CLOEXEC | (noFollow ? O_NOFOLLOW : 0))
        guard fd >= 0 else {
            let e = errno
            throw Failure(reason: e == ENOENT ? "file not found" : e == ELOOP ? "is a symbolic link (refused)" : errnoText(e), notFound: e == ENOENT)
        }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { throw Failure(reason: "not a regular file") }
        if let problem = verify(FileStatus(st)) { throw Failure(reason: problem) }
        guard Int(st.st_size) <= limit else { throw Failure(reason: "too large (\(st.st_size) bytes)") }
        var data = Data(count: Int(st.st_size))
        var got = 0
        let total = data.count
        while got < total {
            let n = SystemCall.retrying { data.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + got, total - got) } }
            guard n > 0 else { break }
            got += n
        }
        return data.prefix(got)
    }

    /// The size of the file at `path` in bytes, or nil when there is none.
    package static func size(_ path: String) -> Int? {
        var st = stat()
        return stat(path, &st) == 0 ? Int(st.st_size) : nil
    }

    /// Reads a file whose size is not known in advance (`/proc`), up to `limit` bytes.
    package static func readStream(path: String, limit: Int) throws(Failure) -> Data {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let e = errno
            throw Failure(reason: errnoText(e), notFound: e == ENOENT)
        }
        defer { close(fd) }
        var data = Data()
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while data.count < limit {
            let n = SystemCall.retrying { Glibc.read(fd, &chunk, chunk.count) }
            guard n > 0 else { break }
            data.append(contentsOf: chunk[0..<n])
        }
        return data
    }

    /// Writes `data` to `path` atomically: a temporary file in the same folder, fsync, rename, fsync of the folder.
    /// A crash at any point leaves either the old file or the new one.
    package static func writeAtomically(_ data: [UInt8], to path: String, mode: mode_t = 0o600) throws(Failure) {
        HandOverPoint.wrote("the file \(path)")
        let dir = PathName(path: path).deletingLastPathComponent
        let suffix = Hex.encode((try? Crypto.randomBytes(6)) ?? [])
        let tmp = path + ".tmp-\(getpid())-\(suffix)"
        let fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
        guard fd >= 0 else { throw Failure(reason: errnoText()) }
        var ok = false
        defer {
            if !ok { unlink(tmp) }
        }
        var written = 0
        while written < data.count {
            let n = SystemCall.retrying { data.withUnsafeBytes { write(fd, $0.baseAddress! + written, data.count - written) } }
            if n <= 0 {
                let e = errno
                close(fd)
                throw Failure(reason: errnoText(e))
            }
            written += n
        }
        Failpoint.hit("store-after-temp-write")
        if fsync(fd) != 0 {
            let e = errno
            close(fd)
            throw Failure(reason: errnoText(e))
        }
        close(fd)
        Failpoint.hit("store-after-fsync")
        guard rename(tmp, path) == 0 else { throw Failure(reason: errnoText()) }
        ok = true
        Failpoint.hit("store-after-rename")
        Directory.sync(dir)
    }
}

/// Room on disk taken before it is needed: a temporary file in `directory`, its blocks allocated now
/// (`posix_fallocate`), that `commit` later fills and renames over a file as `FileIO.writeAtomically` does. A write
/// that must not fail later (the entry that keeps a rotated refresh token) reserves its room before the request that
/// makes it. Unused, the file is removed when the reservation goes.
package final class FileReservation {
    private var fd: Int32
    private let tmp: String
    package let bytes: Int

    /// Reserves `bytes` in `directory`; throws with the system's reason when there is no room (ENOSPC, EFBIG).
    package init(directory: String, bytes: Int, mode: mode_t = 0o600) throws(FileIO.Failure) {
        let suffix = Hex.encode((try? Crypto.randomBytes(6)) ?? [])
        tmp = directory + "/reserved.tmp-\(getpid())-\(suffix)"
        fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
        self.bytes = bytes
        guard fd >= 0 else { throw FileIO.Failure(reason: FileIO.errnoText()) }
        let rc = posix_fallocate(fd, 0, off_t(bytes))
        guard rc == 0 else {
            close(fd)
            unlink(tmp)
            fd = -1
            throw FileIO.Failure(reason: FileIO.errnoText(rc))
        }
    }

    /// Writes `data` into the reserved blocks, syncs, and renames the file over `path` (then syncs the folder).
    /// Data larger than the reservation is written too, and may then meet a full disk.
    package func commit(_ data: [UInt8], to path: String) throws(FileIO.Failure) {
        HandOverPoint.wrote("the file \(path)")
        guard fd >= 0 else { throw FileIO.Failure(reason: "the reserved file was used already") }
        var written = 0
        while written < data.count {
            let n = SystemCall.retrying { data.withUnsafeBytes { pwrite(fd, $0.baseAddress! + written, data.count - written, off_t(written)) } }
            guard n > 0 else { throw FileIO.Failure(reason: FileIO.errnoText()) }
            written += n
        }
        Failpoint.hit("store-after-temp-write")
        guard ftruncate(fd, off_t(data.count)) == 0, fsync(fd) == 0 else { throw FileIO.Failure(reason: FileIO.errnoText()) }
        close(fd)
        fd = -1
        Failpoint.hit("store-after-fsync")
        guard rename(tmp, path) == 0 else {
            let e = errno
            unlink(tmp)
            throw FileIO.Failure(reason: FileIO.errnoText(e))
        }
        Failpoint.hit("store-after-rename")
        Directory.sync(PathName(path: path).deletingLastPathComponent)
    }

    deinit {
        if fd >= 0 {
            close(fd)
            unlink(tmp)
        }
    }
}

/// Path helpers without NSString.
package struct PathName {
    package let path: String
    public init(path: String) { self.path = path }
    public var deletingLastPathComponent: String {
        guard let i = path.lastIndex(of: "/") else { return "." }
        return i == path.startIndex ? "/" : String(path[..<i])
    }
    public var lastComponent: String { path.split(separator: "/").last.map(String.init) ?? path }
}

/// `flock(2)` on a file in the store folder: held across processes, released when the process dies. A thread
/// that holds a lock already and asks for it again just runs on (a second descriptor's `flock` would wait for the
/// first one forever).
package enum FileLock {
    private static let held = Locked<Set<String>>([])

    /// Runs `body` holding the lock of `path` (created 0600): exclusive, or shared with other shared holders.
    package static func with<T>(_ path: String, shared: Bool = false, _ body: () throws(SignInError) -> T) throws(SignInError) -> T {
        try holding(path, acquire: { (fd) throws(SignInError) in
            guard Posix.flock(fd, shared ? LOCK_SH : LOCK_EX) == 0 else { throw .storeUnwritable(path: path, reason: FileIO.errnoText()) }
        }, body)
    }

    /// As `with`, exclusive, for a wait a person may be kept in (a sign-in another process holds): when the lock is
    /// held elsewhere, `waiting` is called once (to say so), and the wait ends with `.canceled` as soon as `canceller`
    /// is cancelled.
    package static func with<T>(_ path: String, waiting: () -> Void, canceller: Canceller, _ body: () throws(SignInError) -> T) throws(SignInError) -> T {
        try holding(path, acquire: { (fd) throws(SignInError) in
            var said = false
            while Posix.flock(fd, LOCK_EX | LOCK_NB) != 0 {
                guard errno == EWOULDBLOCK else { throw .storeUnwritable(path: path, reason: FileIO.errnoText()) }
                if !said { waiting(); said = true }
                if canceller.sleep(seconds: 0.1) { throw .canceled(reason: "the wait for another process's sign-in was canceled") }
            }
        }, body)
    }

    /// The one life of a lock: a thread that holds `path` already runs `body` at once; otherwise the file is opened
    /// (created 0600), `acquire` takes the lock on it, `body` runs, and the lock and the file are let go.
    private static func holding<T>(_ path: String, acquire: (Int32) throws(SignInError) -> Void, _ body: () throws(SignInError) -> T) throws(SignInError) -> T {
        let mine = "\(pthread_self()) \(path)"
        if held.withLock({ $0.contains(mine) }) { return try body() }
        let fd = Posix.open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .storeUnwritable(path: path, reason: FileIO.errnoText()) }
        defer { Posix.close(fd) }
        try acquire(fd)
        held.withLock { _ = $0.insert(mine) }
        defer {
            held.withLock { _ = $0.remove(mine) }
            Posix.flock(fd, LOCK_UN)
        }
        return try body()
    }
}
