import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// Runs blocking work (sockets, libcurl, file locks) on a thread of its own, off Swift's cooperative pool, whose
/// few threads (two here) must never wait on the network or a person, and off Dispatch's pool, which a host
/// program may have filled with blocked work of its own. Cancelling the calling task cancels the
/// work at once: the listener's wait ends, and every transfer in flight has its socket shut down (`HTTPClient`
/// finds the canceller through `CurrentCanceller`).
/// `operation` names the work in a cancellation's message ("the refresh was canceled while waiting for ...").
package func offPool<T: Sendable>(_ operation: String = "the request", _ body: @escaping @Sendable (Canceller) throws(SignInError) -> T) async throws(SignInError) -> T {
    let canceller = Canceller()
    let result: Result<T, SignInError> = await withTaskCancellationHandler {
        await withCheckedContinuation { k in
            DedicatedThread.start(canceller: canceller, { () -> Result<T, SignInError> in
                CurrentOperation.name = operation
                defer { CurrentOperation.name = nil }
                do throws(SignInError) { return .success(try body(canceller)) } catch { return .failure(error) }
            }, then: { k.resume(returning: $0) })
        }
    } onCancel: {
        canceller.cancel()
    }
    return try result.get()
}

/// The canceller of the work running on this thread (a thread-local: the work runs on a Dispatch thread, where
/// task-locals do not reach).
package enum CurrentCanceller {
    private static let key: pthread_key_t = {
        var k = pthread_key_t()
        pthread_key_create(&k, nil)
        return k
    }()

    package static func set(_ c: Canceller?) {
        if let old = pthread_getspecific(key) { Unmanaged<Canceller>.fromOpaque(old).release() }
        pthread_setspecific(key, c.map { Unmanaged.passRetained($0).toOpaque() })
    }

    package static var value: Canceller? {
        pthread_getspecific(key).map { Unmanaged<Canceller>.fromOpaque($0).takeUnretainedValue() }
    }
}

/// What the work on this thread is, for a cancellation's message (a thread-local, as `CurrentCanceller`).
package enum CurrentOperation {
    private final class Box {
        package let name: String
        init(_ name: String) { self.name = name }
    }

    private static let key: pthread_key_t = {
        var k = pthread_key_t()
        pthread_key_create(&k, nil)
        return k
    }()

    package static var name: String? {
        get { pthread_getspecific(key).map { Unmanaged<Box>.fromOpaque($0).takeUnretainedValue().name } }
        set {
            if let old = pthread_getspecific(key) { Unmanaged<Box>.fromOpaque(old).release() }
            pthread_setspecific(key, newValue.map { Unmanaged.passRetained(Box($0)).toOpaque() })
        }
    }
}

/// A detached thread for one piece of blocking work.
package enum DedicatedThread {
    /// Runs `work` on a thread of its own with `canceller` as its `CurrentCanceller`, then frees the thread's
    /// OpenSSL state and only then hands the result over (`then`): the thread ends right after, and its OpenSSL
    /// state must go now, not in a race with the process's exit.
    package static func start<R: Sendable>(canceller: Canceller?, _ work: @escaping @Sendable () -> R, then handOver: @escaping @Sendable (R) -> Void) {
        start {
            CurrentCanceller.set(canceller)
            let result = work()
            CurrentCanceller.set(nil)
            Crypto.releaseThreadState()
            handOver(result)
        }
    }

    private final class Work {
        package let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }

    /// Runs `body` on a new detached thread (which inherits the calling thread's signal mask).
    public static func start(_ body: @escaping @Sendable () -> Void) {
        let work = Unmanaged.passRetained(Work(body)).toOpaque()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        defer { pthread_attr_destroy(&attributes) }
        var thread = pthread_t()
        let rc = pthread_create(&thread, &attributes, { context in
            let work = Unmanaged<Work>.fromOpaque(context!).takeRetainedValue()
            work.body()
            return nil
        }, work)
        if rc != 0 {
            // No thread to be had: run it on Dispatch's pool rather than not at all.
            let w = Unmanaged<Work>.fromOpaque(work).takeRetainedValue()
            nonisolated(unsafe) let run = w.body
            DispatchQueue.global().async { run() }
        }
    }
}
