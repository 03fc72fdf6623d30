import SignInBase
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// A subscription to the changes of a store folder: `onEvent` is called at once when a burst of writes starts, and
/// again at its end with `true` when the watch has ended (the folder, or any folder above it, removed, moved or
/// replaced; the kernel's queue overflowed); `onChange` after the burst (about 20 ms after its last write). Another
/// process or another client signing in or out, switching, refreshing. Ends with `stop()` or when let go.
///
/// One watch per process and folder, whatever the number of subscribers (`StoreWatch`): one inotify instance and one
/// thread, so a program with a thousand clients of one store uses one of the user's 128 inotify instances, not all.
package final class StoreWatcher: Sendable {
    private let watch: StoreWatch
    private let id: Int

    /// Nil when the folder cannot be watched (inotify unavailable, the folder unusable): a caller then keeps nothing
    /// it would have to trust the watch for.
    package init?(directory: String, onEvent: @escaping @Sendable (_ ended: Bool) -> Void = { _ in }, onChange: @escaping @Sendable () -> Void) {
        guard let (watch, id) = StoreWatch.subscribe(directory: directory, StoreWatch.Subscriber(onEvent: onEvent, onChange: onChange)) else { return nil }
        self.watch = watch
        self.id = id
    }

    package func stop() { watch.unsubscribe(id) }

    deinit { watch.unsubscribe(id) }
}

/// The one watch of a folder in this process, shared by its subscribers: an inotify instance watching the folder for
/// writes, renames and removals, and each folder above it for the one name on the way down (so a parent replaced,
/// `mv data data.old; mv data.new data`, ends the watch), read by one thread. It ends when its last subscriber goes, or
/// when the folder it watched is no longer the one at its path (then the next subscriber starts a new one there).
final class StoreWatch: Sendable {
    struct Subscriber: Sendable {
        let onEvent: @Sendable (Bool) -> Void
        let onChange: @Sendable () -> Void
    }
    private struct State {
        var subscribers: [Int: Subscriber] = [:]
        var nextID = 0
        var ended = false
    }
    private let state = Locked(State())
    private let canceller = Canceller()
    let directory: String

    /// Every live watch of this process, by folder.
    private static let watches = Locked<[String: StoreWatch]>([:])

    private init(directory: String) { self.directory = directory }

    /// Joins the folder's watch, starting it if none runs; nil when it cannot be watched.
    static func subscribe(directory: String, _ subscriber: Subscriber) -> (StoreWatch, Int)? {
        watches.withLock { all -> (StoreWatch, Int)? in
            if let w = all[directory], let id = w.add(subscriber) { return (w, id) }
            guard let w = StoreWatch.start(directory: directory), let id = w.add(subscriber) else { return nil }
            all[directory] = w
            return (w, id)
        }
    }

    private func add(_ s: Subscriber) -> Int? {
        state.withLock { st -> Int? in
            guard !st.ended else { return nil }
            st.nextID += 1
            st.subscribers[st.nextID] = s
            return st.nextID
        }
    }

    func unsubscribe(_ id: Int) {
        let last = state.withLock { st -> Bool in
            st.subscribers[id] = nil
            guard st.subscribers.isEmpty, !st.ended else { return false }
            st.ended = true
            return true
        }
        guard last else { return }
        Self.watches.withLock { all in if all[directory] === self { all[directory] = nil } }
        canceller.cancel()
    }

    private var subscribers: [Subscriber] { state.withLock { Array($0.subscribers.values) } }

    /// The watch ended by itself: no new subscriber joins it, and the folder's next subscriber starts another.
    private func endedByItself() {
        state.withLock { $0.ended = true }
        Self.watches.withLock { all in if all[directory] === self { all[directory] = nil } }
    }

    private static let folderMask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_CREATE | IN_DELETE_SELF | IN_MOVE_SELF)
    private static let ancestorMask = UInt32(IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_CREATE | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)

    private static func start(directory: String) -> StoreWatch? {
        _ = Directory.create(directory)
        let fd = Posix.inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard fd >= 0 else { return nil }
        let folder = Posix.inotify_add_watch(fd, directory, folderMask)
        guard folder >= 0 else {
            Posix.close(fd)
            return nil
        }
        // Each folder above, for the name of the next one down: a rename or removal there replaces the store's folder.
        var ancestors: [Int32: String] = [:]
        var path = directory
        while let slash = path.lastIndex(of: "/"), path != "/" {
            let name = String(path[path.index(after: slash)...])
            path = slash == path.startIndex ? "/" : String(path[..<slash])
            guard !name.isEmpty else { continue }
            let wd = Posix.inotify_add_watch(fd, path, ancestorMask)
            if wd >= 0 { ancestors[wd] = name }
        }
        let w = StoreWatch(directory: directory)
        let canceller = w.canceller
        DedicatedThread.start { [ancestors] in
            defer { Posix.close(fd) }
            var buffer = [UInt8](repeating: 0, count: 8192)
            var ended = false
            while !canceller.isCanceled && !ended {
                guard case .success(let ready) = Posix.readable([fd, canceller.pollFD], milliseconds: -1), !canceller.isCanceled else { continue }
                guard ready[0] else { continue }
                var n = Posix.read(fd, &buffer, buffer.count)
                var relevant = false
                while n > 0 {
                    let seen = Self.read(buffer, count: n, folder: folder, ancestors: ancestors)
                    relevant = relevant || seen.relevant
                    ended = ended || seen.ended
                    n = Posix.read(fd, &buffer, buffer.count)
                }
                // Another name changing in a folder above (a file in HOME): nothing of the store's.
                guard relevant || ended else { continue }
                if ended { w.endedByItself() }
                for s in w.subscribers { s.onEvent(false) }
                // Drain this burst: a save is a temporary file, an fsync and a rename, a lock file opened and closed.
                while !ended && Posix.isReadable(fd, milliseconds: 20) && !canceller.isCanceled {
                    var m = Posix.read(fd, &buffer, buffer.count)
                    while m > 0 {
                        ended = ended || Self.read(buffer, count: m, folder: folder, ancestors: ancestors).ended
                        m = Posix.read(fd, &buffer, buffer.count)
                    }
                }
                if ended { w.endedByItself() }
                let subscribers = w.subscribers
                for s in subscribers { s.onEvent(ended) }
                if !canceller.isCanceled { for s in subscribers { s.onChange() } }
            }
        }
        return w
    }

    /// What these events (`struct inotify_event`: 16 bytes, then a name padded with NULs) say: whether any is the
    /// store's (in its folder, or its folder's own name above), and whether the watch is over.
    private static func read(_ events: [UInt8], count: Int, folder: Int32, ancestors: [Int32: String]) -> (relevant: Bool, ended: Bool) {
        let over = UInt32(IN_IGNORED | IN_Q_OVERFLOW | IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT)
        var offset = 0
        var relevant = false
        var ended = false
        while offset + 16 <= count {
            let (wd, mask, nameLength) = events.withUnsafeBytes { b in
                (b.loadUnaligned(fromByteOffset: offset, as: Int32.self), b.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self),
                 Int(b.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self)))
            }
            if mask & UInt32(IN_Q_OVERFLOW) != 0 { return (true, true) }
            if wd == folder {
                relevant = true
                if mask & over != 0 { ended = true }
            } else if let child = ancestors[wd] {
                let nameBytes = events[(offset + 16)..<min(offset + 16 + nameLength, count)].prefix { $0 != 0 }
                if String(decoding: nameBytes, as: UTF8.self) == child || mask & over != 0 {
                    relevant = true
                    ended = true
                }
            }
            offset += 16 + nameLength
        }
        return (relevant, ended)
    }
}
