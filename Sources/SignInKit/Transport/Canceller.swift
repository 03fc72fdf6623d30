#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Wakes a blocking wait (the loopback listener, device-flow polling) from another thread or a signal.
final class Canceller: Sendable {
    private let readFD: Int32
    private let writeFD: Int32
    private let flag = Atomic<Bool>(false)
    /// Sockets of transfers in flight: shut down at cancellation, so a waiting transfer ends at once.
    private let sockets = Locked<Set<Int32>>([])

    init() {
        var fds: [Int32] = [-1, -1]
        if pipe(&fds) == 0 {
            for fd in fds {
                _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
                _ = fcntl(fd, F_SETFL, O_NONBLOCK)
            }
        } else {
            fds = [-1, -1]
        }
        readFD = fds[0]
        writeFD = fds[1]
    }

    deinit {
        if readFD >= 0 { close(readFD) }
        if writeFD >= 0 { close(writeFD) }
    }

    var isCanceled: Bool { flag.load(ordering: .acquiring) }
    /// A descriptor that becomes readable once `cancel()` was called, for `poll`.
    var pollFD: Int32 { readFD }

    /// Registers a transfer's socket; true when already canceled (the caller should give up).
    func watch(socket fd: Int32) -> Bool {
        sockets.withLock { _ = $0.insert(fd) }
        if isCanceled { shutdown(fd, Int32(SHUT_RDWR)); return true }
        return false
    }

    func unwatch(socket fd: Int32) { sockets.withLock { _ = $0.remove(fd) } }

    func cancel() {
        flag.store(true, ordering: .releasing)
        sockets.withLock { for fd in $0 { shutdown(fd, Int32(SHUT_RDWR)) } }
        var b: UInt8 = 1
        _ = write(writeFD, &b, 1)
    }

    /// Waits up to `seconds`; returns true if canceled meanwhile.
    func sleep(seconds: Double) -> Bool {
        if isCanceled { return true }
        var p = pollfd(fd: readFD, events: Int16(POLLIN), revents: 0)
        _ = poll(&p, 1, Int32(max(0, seconds * 1000)))
        return isCanceled
    }
}
