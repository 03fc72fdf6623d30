import SignInBase
import SignInProtocol
import SignInStorage
import SignInGrant
import SignInTransport
import FoundationEssentials

/// The entries a client read last, kept in memory while nothing in the store's folder changed, so that a cached
/// `freshToken()` in a long-running program costs a lock and a clock read: no thread, no file, no system call.
///
/// **The caches in front of one token**, outermost first; each answers only while what it copied still holds, and the
/// first that holds answers (none ever answers an expired token: freshness is checked on every answer):
/// 1. `APIAuthorizer`'s last headers (`FreshHeaders`), per authorizer: while their token is fresh by the wall clock
///    and this cache's generation is the one they were made under. Learns of a change through this cache: any event
///    in the store's folder bumps the generation.
/// 2. This cache (`ResidentCredentials`), per process and store folder: while the folder has had no inotify event.
///    Learns of a change from the kernel (its watcher thread), or at once from this client's own writes.
/// 3. `DecryptedEntries` (SignInStorage), per `CredentialStore`: an entry this process decrypted, while its file has
///    the same inode, size and modification time. Learns of a change by a stat(2) of the file on each read.
/// 4. `KernelEntries` (SignInStorage), per user, across processes: the decrypted entry in the kernel keyring beside
///    the unlocked key, while the file's identity matches and the key is cached (`key_cache_seconds`). Learns of a
///    change the same way; `signin lock`, a key move and sign-out remove them.
/// Behind them all, the encrypted file is the truth: a cached `signin token` (a new process) starts at 3 and 4; a
/// long-running program's call at 1 or 2.
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
