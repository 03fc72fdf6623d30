#if canImport(Glibc)
import Glibc
#endif

/// A value behind a pthread mutex. Synchronization's `Mutex` would do, but on Linux it waits on a futex directly,
/// which ThreadSanitizer cannot see, so CI's race detector would report every use; this one it understands.
package final class Locked<Value>: @unchecked Sendable {
    private var value: Value
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)

    package init(_ value: Value) {
        self.value = value
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    package func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}

/// Locks by name within this process, each held by one thread at a time; a thread that holds a name and asks for it
/// again runs on. The token path nests an account's lock (a derived token whose subject token the provider refused
/// refreshes the grant under the lock it holds), so a lock that waited for its own holder would hang it forever.
/// `FileLock` keeps the same rule across processes.
package final class NamedLocks: Sendable {
    private let locks = Locked<[String: Locked<Void>]>([:])
    private let held = Locked<Set<String>>([])

    package init() {}

    /// Runs `body` holding `name`'s lock (at once when this thread holds it already).
    package func with<T>(_ name: String, _ body: () throws(SignInError) -> T) throws(SignInError) -> T {
        let mine = "\(pthread_self()) \(name)"
        if held.withLock({ $0.contains(mine) }) { return try body() }
        let lock = locks.withLock { all in
            if let existing = all[name] { return existing }
            let made = Locked<Void>(())
            all[name] = made
            return made
        }
        let result: Result<T, SignInError> = lock.withLock { _ in
            held.withLock { _ = $0.insert(mine) }
            defer { held.withLock { _ = $0.remove(mine) } }
            do throws(SignInError) { return .success(try body()) } catch { return .failure(error) }
        }
        return try result.get()
    }
}
