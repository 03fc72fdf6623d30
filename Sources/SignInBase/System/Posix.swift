import CSignInSystem
#if canImport(Glibc)
import Glibc
#endif

/// The C library, one function per call, as swift-nio's `Posix` has it: the only place outside the rest of
/// `System/` where signin's Swift code calls libc (`.ci/system-calls` fails the build on any other).
///
/// Each function keeps the C call's name, arguments and result, so a reader who knows the call knows the function;
/// what it adds is the same for every caller: a call that an interrupting signal can cut short (`read`, `write`,
/// `poll`, `accept`, `connect`, `send`, `fsync`) is retried on `EINTR` here, never by the caller. `close` is not
/// retried: on Linux the descriptor is gone even when it reports `EINTR`. Errors stay in `errno`, for the callers
/// that tell one from another; `FileIO.errnoText()` is what a person reads.
package enum Posix {
    // Descriptors.
    /// `open(2)` with a mode (for `O_CREAT`).
    package static func open(_ path: String, _ flags: Int32, _ mode: mode_t = 0) -> Int32 { SystemCall.retrying { Glibc.open(path, flags, mode) } }
    @discardableResult package static func fcntl(_ fd: Int32, _ command: Int32, _ value: Int32) -> Int32 { Glibc.fcntl(fd, command, value) }
    package static func fcntl(_ fd: Int32, _ command: Int32) -> Int32 { Glibc.fcntl(fd, command) }
    @discardableResult package static func close(_ fd: Int32) -> Int32 { Glibc.close(fd) }
    /// `flock(2)`, EINTR retried.
    @discardableResult package static func flock(_ fd: Int32, _ operation: Int32) -> Int32 { SystemCall.retrying { lockFile(fd, operation) } }
    @discardableResult package static func read(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
        SystemCall.retrying { Glibc.read(fd, buffer, count) }
    }
    @discardableResult package static func write(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
        if fd == 1 || fd == 2 { HandOverPoint.wrote(fd == 1 ? "to standard output" : "to standard error") }
        return SystemCall.retrying { Glibc.write(fd, buffer, count) }
    }
    @discardableResult package static func poll(_ fds: UnsafeMutablePointer<pollfd>?, _ count: nfds_t, _ timeout: Int32) -> Int32 {
        SystemCall.retrying { Glibc.poll(fds, count, timeout) }
    }
    @discardableResult package static func pipe(_ fds: UnsafeMutablePointer<Int32>) -> Int32 { Glibc.pipe(fds) }
    @discardableResult package static func fsync(_ fd: Int32) -> Int32 { SystemCall.retrying { Glibc.fsync(fd) } }
    @discardableResult package static func fchmod(_ fd: Int32, _ mode: mode_t) -> Int32 { Glibc.fchmod(fd, mode) }
    package static func isatty(_ fd: Int32) -> Bool { Glibc.isatty(fd) == 1 }
    package static func tcgetpgrp(_ fd: Int32) -> pid_t { Glibc.tcgetpgrp(fd) }

    // Paths.
    @discardableResult package static func access(_ path: String, _ mode: Int32) -> Int32 { Glibc.access(path, mode) }
    @discardableResult package static func lstat(_ path: String, _ st: UnsafeMutablePointer<stat>) -> Int32 { Glibc.lstat(path, st) }
    @discardableResult package static func stat(_ path: String, _ st: UnsafeMutablePointer<stat>) -> Int32 { fstatat(AT_FDCWD, path, st, 0) }
    @discardableResult package static func unlink(_ path: String) -> Int32 { Glibc.unlink(path) }
    @discardableResult package static func rename(_ from: String, _ to: String) -> Int32 { Glibc.rename(from, to) }
    @discardableResult package static func link(_ from: String, _ to: String) -> Int32 { Glibc.link(from, to) }
    @discardableResult package static func rmdir(_ path: String) -> Int32 { Glibc.rmdir(path) }
    @discardableResult package static func chmod(_ path: String, _ mode: mode_t) -> Int32 { Glibc.chmod(path, mode) }
    @discardableResult package static func umask(_ mask: mode_t) -> mode_t { Glibc.umask(mask) }
    @discardableResult package static func utimensat(_ dirfd: Int32, _ path: String, _ times: UnsafePointer<timespec>?, _ flags: Int32) -> Int32 {
        Glibc.utimensat(dirfd, path, times, flags)
    }
    /// The first line of a small text file (a /proc file), without its line break; nil when it cannot be read.
    package static func firstLine(of path: String) -> String? {
        guard let f = fopen(path, "r") else { return nil }
        defer { fclose(f) }
        var buf = [CChar](repeating: 0, count: 256)
        guard fgets(&buf, 255, f) != nil else { return nil }
        let line = String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return line.hasSuffix("\n") ? String(line.dropLast()) : line
    }

    // Sockets.
    package static func socket(_ domain: Int32, _ type: Int32, _ proto: Int32) -> Int32 { Glibc.socket(domain, type, proto) }
    package static func bind(_ fd: Int32, _ address: UnsafePointer<sockaddr>?, _ length: socklen_t) -> Int32 { Glibc.bind(fd, address, length) }
    package static func listen(_ fd: Int32, _ backlog: Int32) -> Int32 { Glibc.listen(fd, backlog) }
    package static func accept(_ fd: Int32, _ address: UnsafeMutablePointer<sockaddr>?, _ length: UnsafeMutablePointer<socklen_t>?) -> Int32 {
        SystemCall.retrying { Glibc.accept(fd, address, length) }
    }
    package static func connect(_ fd: Int32, _ address: UnsafePointer<sockaddr>?, _ length: socklen_t) -> Int32 {
        SystemCall.retrying { Glibc.connect(fd, address, length) }
    }
    @discardableResult package static func send(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int, _ flags: Int32) -> Int {
        SystemCall.retrying { Glibc.send(fd, buffer, count, flags) }
    }
    @discardableResult package static func shutdown(_ fd: Int32, _ how: Int32) -> Int32 { Glibc.shutdown(fd, how) }
    @discardableResult package static func setsockopt(_ fd: Int32, _ level: Int32, _ name: Int32, _ value: UnsafeRawPointer?, _ length: socklen_t) -> Int32 {
        Glibc.setsockopt(fd, level, name, value, length)
    }
    /// Acknowledges what the TCP socket `fd` received at once (`TCP_QUICKACK`, which Linux drops again by itself):
    /// a server that writes an answer's head and its body apart, with Nagle's algorithm on, sends the body only once
    /// the head is acknowledged, and a delayed acknowledgement would hold it 40 ms on a kept connection.
    package static func acknowledgeNow(_ fd: Int32) {
        guard fd >= 0 else { return }
        var one: Int32 = 1
        _ = Glibc.setsockopt(fd, Int32(IPPROTO_TCP), TCP_QUICKACK, &one, socklen_t(MemoryLayout<Int32>.size))
    }
    package static func getsockname(_ fd: Int32, _ address: UnsafeMutablePointer<sockaddr>?, _ length: UnsafeMutablePointer<socklen_t>?) -> Int32 {
        Glibc.getsockname(fd, address, length)
    }
    package static func getpeername(_ fd: Int32, _ address: UnsafeMutablePointer<sockaddr>?, _ length: UnsafeMutablePointer<socklen_t>?) -> Int32 {
        Glibc.getpeername(fd, address, length)
    }
    /// The IPv6 loopback address, `::1`.
    package static var ipv6Loopback: in6_addr { in6addr_loopback }
    package static func inet_pton(_ family: Int32, _ text: String, _ out: UnsafeMutableRawPointer?) -> Int32 { Glibc.inet_pton(family, text, out) }

    // inotify.
    package static func inotify_init1(_ flags: Int32) -> Int32 { Glibc.inotify_init1(flags) }
    package static func inotify_add_watch(_ fd: Int32, _ path: String, _ mask: UInt32) -> Int32 { Glibc.inotify_add_watch(fd, path, mask) }

    // This process and others.
    package static func getpid() -> pid_t { Glibc.getpid() }
    package static func geteuid() -> uid_t { Glibc.geteuid() }
    package static func getpgrp() -> pid_t { Glibc.getpgrp() }
    @discardableResult package static func kill(_ pid: pid_t, _ signal: Int32) -> Int32 { Glibc.kill(pid, signal) }
    /// The environment variable's value, nil when unset.
    package static func getenv(_ name: String) -> String? { Glibc.getenv(name).map { String(cString: $0) } }
    /// Whether the environment variable is set to something non-empty.
    package static func isSet(_ name: String) -> Bool { Glibc.getenv(name).map { $0.pointee != 0 } ?? false }
    @discardableResult package static func setenv(_ name: String, _ value: String, _ overwrite: Int32) -> Int32 { Glibc.setenv(name, value, overwrite) }
    @discardableResult package static func unsetenv(_ name: String) -> Int32 { Glibc.unsetenv(name) }
    /// Ignores `signal` from now on (SIG_IGN).
    package static func ignore(_ signal: Int32) { _ = Glibc.signal(signal, SIG_IGN) }
    package static func exit(_ code: Int32) -> Never { Glibc.exit(code) }
    /// Ends the process at once (`_exit`: no atexit handlers, which other threads may still be using).
    package static func exitNow(_ code: Int32) -> Never { Glibc._exit(code) }
    package static func abort() -> Never { Glibc.abort() }
    /// Seconds since 1970, as `time(nil)`.
    package static func now() -> Int { Glibc.time(nil) }
    package static func usleep(_ microseconds: UInt32) { _ = Glibc.usleep(microseconds) }

    /// Releases memory a C shim allocated with `malloc` and handed over (a TPM call's error text).
    package static func free(_ pointer: UnsafeMutableRawPointer?) { Glibc.free(pointer) }

    /// Overwrites `bytes` with zeros in a way the compiler may not drop (a secret's last copy).
    package static func zero(_ bytes: UnsafeMutableRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        explicit_bzero(base, bytes.count)
    }
}

/// libc's `flock` function (inside `Posix`, the name is its own wrapper's, and `Glibc.flock` the struct's).
private func lockFile(_ fd: Int32, _ operation: Int32) -> Int32 { flock(fd, operation) }
