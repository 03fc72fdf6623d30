import SignInBase
import SignInProtocol
import SignInTransport
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Watches a store folder with inotify on a thread of its own, and calls `onChange` (coalesced: once per burst of
/// writes, about 20 ms after the last) when any file in it is written, renamed or removed: another process or
/// another client signing in or out, switching, refreshing. `onEvent` is called at once, at the burst's start and
/// again at its end, with `true` when the watch has ended (the folder removed or moved, the kernel's queue
/// overflowed): the thread then stops. Stops with `stop()`.
package final class StoreWatcher: Sendable {
    private let canceller = Canceller()

    /// Nil when the folder cannot be watched (inotify unavailable, the folder unusable).
    package init?(directory: String, onEvent: @escaping @Sendable (_ ended: Bool) -> Void = { _ in }, onChange: @escaping @Sendable () -> Void) {
        _ = Directory.create(directory)
        let fd = Posix.inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard fd >= 0 else { return nil }
        let mask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_CREATE | IN_DELETE_SELF | IN_MOVE_SELF)
        guard Posix.inotify_add_watch(fd, directory, mask) >= 0 else {
            Posix.close(fd)
            return nil
        }
        let canceller = self.canceller
        DedicatedThread.start {
            defer { Posix.close(fd) }
            var buffer = [UInt8](repeating: 0, count: 4096)
            var ended = false
            while !canceller.isCanceled && !ended {
                var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0), pollfd(fd: canceller.pollFD, events: Int16(POLLIN), revents: 0)]
                guard Posix.poll(&fds, 2, -1) > 0, !canceller.isCanceled else { continue }
                guard fds[0].revents != 0 else { continue }
                onEvent(false)
                // Drain this burst: a save is a temporary file, an fsync and a rename, a lock file opened and closed.
                repeat {
                    var n = Posix.read(fd, &buffer, buffer.count)
                    while n > 0 {
                        ended = ended || Self.watchEnded(buffer, count: n)
                        n = Posix.read(fd, &buffer, buffer.count)
                    }
                    fds[0].revents = 0
                } while !ended && Posix.poll(&fds, 1, 20) > 0 && !canceller.isCanceled
                onEvent(ended)
                if !canceller.isCanceled { onChange() }
            }
        }
    }

    /// Whether these events (`struct inotify_event`, each 16 bytes and a name) say the watch is over.
    private static func watchEnded(_ events: [UInt8], count: Int) -> Bool {
        let over = UInt32(IN_IGNORED | IN_Q_OVERFLOW | IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT)
        var offset = 0
        while offset + 16 <= count {
            let mask = events.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self) }
            let nameLength = events.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self) }
            if mask & over != 0 { return true }
            offset += 16 + Int(nameLength)
        }
        return false
    }

    package func stop() { canceller.cancel() }

    deinit { canceller.cancel() }
}
