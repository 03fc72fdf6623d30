import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Watches a store folder with inotify on a thread of its own, and calls `onChange` (coalesced: once per burst of
/// writes, about 20 ms after the last) when any file in it is written, renamed or removed: another process or
/// another client signing in or out, switching, refreshing. Stops with `stop()`.
final class StoreWatcher: Sendable {
    private let canceller = Canceller()

    /// Nil when the folder cannot be watched (inotify unavailable, the folder unusable).
    init?(directory: String, onChange: @escaping @Sendable () -> Void) {
        _ = Directory.create(directory)
        let fd = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard fd >= 0 else { return nil }
        let mask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_CREATE)
        guard inotify_add_watch(fd, directory, mask) >= 0 else {
            close(fd)
            return nil
        }
        let canceller = self.canceller
        DedicatedThread.start {
            defer { close(fd) }
            var buffer = [UInt8](repeating: 0, count: 4096)
            while !canceller.isCanceled {
                var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0), pollfd(fd: canceller.pollFD, events: Int16(POLLIN), revents: 0)]
                guard poll(&fds, 2, -1) > 0, !canceller.isCanceled else { continue }
                guard fds[0].revents != 0 else { continue }
                // Drain this burst: a save is a temporary file, an fsync and a rename, a lock file opened and closed.
                repeat {
                    while read(fd, &buffer, buffer.count) > 0 {}
                    fds[0].revents = 0
                } while poll(&fds, 1, 20) > 0 && !canceller.isCanceled
                if !canceller.isCanceled { onChange() }
            }
        }
    }

    func stop() { canceller.cancel() }

    deinit { canceller.cancel() }
}
