import SignInBase
import SignInProtocol
import SignInStorage
import SignInGrant
import SignInTransport
import FoundationEssentials

/// The entries a client read last, kept in memory while nothing in the store's folder changed, so that a cached
/// `freshToken()` in a long-running program costs a lock and a clock read: no thread, no file, no system call.
///
/// - Only for the encrypted file store (`CredentialStore`): its folder is watched with inotify (`StoreWatcher`: one
///   watch and one thread per process and folder, shared by every client of it, started by the first
///   `restorePreviousSignIn`; the folders above it are watched for its name, so a replaced parent is seen). Any event in the folder (a
///   refresh, a sign-in or sign-out, a switch of account, a key move, by any process) forgets every entry; so does
///   any change this client makes (`SignInClient.currentUserChanged`), before its call returns.
/// - Another process's change is seen once the watcher's thread has woken (microseconds; at worst, the token that
///   was valid an instant before is handed out once more, never an expired one: freshness is checked at each call).
/// - A folder that cannot be watched (no inotify) keeps nothing: every call reads the store. A watch that ended (the
///   folder or one above it removed, moved or replaced; the kernel's queue overflowed) forgets everything, and the
///   next read watches the folder now at the path.
final class ResidentCredentials: Sendable {
    private struct Entry {
        let generation: UInt64
        let credentials: StoredCredentials
        let isCurrent: Bool
    }
    private struct State {
        var generation: UInt64 = 0
        var entries: [String: Entry] = [:]
        var watcher: StoreWatcher?
        /// The folder cannot be watched (or no longer is): nothing is kept.
        var unwatched = false
    }
    private let state = Locked(State())
    let directory: String

    init(directory: String) { self.directory = directory }

    /// The entry read for `account` (nil: the current one), when nothing changed since.
    func lookup(_ account: String?) -> (credentials: StoredCredentials, isCurrent: Bool)? {
        state.withLock { s in
            guard !s.unwatched, let e = s.entries[account ?? ""], e.generation == s.generation else { return nil }
            return (e.credentials, e.isCurrent)
        }
    }

    /// Where a read begins: the generation it will be kept under, the folder's watch started first (so that a change
    /// between now and the read's end is seen). Nil when the folder cannot be watched.
    func beginRead() -> UInt64? {
        if state.withLock({ s in !s.unwatched && s.watcher == nil }) {
            // Weak: the watcher's thread must not keep this (and its client) alive.
            let watcher = StoreWatcher(directory: directory, onEvent: { [weak self] ended in self?.changed(ended: ended) }, onChange: {})
            let surplus: StoreWatcher? = state.withLock { s in
                if watcher == nil { s.unwatched = true; return nil }
                if s.watcher != nil { return watcher }
                s.watcher = watcher
                return nil
            }
            surplus?.stop()
        }
        return state.withLock { s in s.unwatched ? nil : s.generation }
    }

    /// The folder's generation when it is watched (nil: unwatched, so nothing may be kept): a value kept under it is
    /// good while this is unchanged. A lock and a read: no system call.
    var watchedGeneration: UInt64? {
        state.withLock { s in s.unwatched || s.watcher == nil ? nil : s.generation }
    }

    /// Keeps what a read that began at `generation` found; forgotten at once if anything changed meanwhile.
    func keep(_ account: String?, _ credentials: StoredCredentials, isCurrent: Bool, generation: UInt64) {
        state.withLock { s in
            guard !s.unwatched, generation == s.generation else { return }
            s.entries[account ?? ""] = Entry(generation: generation, credentials: credentials, isCurrent: isCurrent)
        }
    }

    /// Something in the folder changed (`ended`: and it is no longer watched, the folder or one above it replaced):
    /// every entry is forgotten, and with `ended` the next read watches the folder now at the path again.
    func changed(ended: Bool = false) {
        let idle: StoreWatcher? = state.withLock { s in
            s.generation &+= 1
            s.entries.removeAll()
            guard ended else { return nil }
            defer { s.watcher = nil }
            return s.watcher
        }
        idle?.stop()
    }

    deinit { state.withLock { $0.watcher }?.stop() }
}
