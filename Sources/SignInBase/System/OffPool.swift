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
/// `inPlace`: when the caller already runs on a thread of its own (a task that prefers `BlockingTaskExecutor`), the
/// work runs right there, with no hand-over to another thread and back; for a caller that holds no actor, which
/// would be held for the whole wait.
package func offPool<T: Sendable>(_ operation: String = "the request", inPlace: Bool = false,
                                  _ body: @escaping @Sendable (Canceller) throws(SignInError) -> T) async throws(SignInError) -> T {
    let canceller = Canceller()
    /// The work, named for a cancellation's message while it runs, on whichever thread runs it.
    @Sendable func named() -> Result<T, SignInError> {
        let outer = CurrentOperation.name
        CurrentOperation.name = operation
        defer { CurrentOperation.name = outer }
        do throws(SignInError) { return .success(try body(canceller)) } catch { return .failure(error) }
    }
    let result: Result<T, SignInError>
    if inPlace && BlockingTaskExecutor.isCurrent {
        result = await withTaskCancellationHandler {
            let outer = CurrentCanceller.value
            CurrentCanceller.set(canceller)
            defer { CurrentCanceller.set(outer) }
            return named()
        } onCancel: {
            canceller.cancel()
        }
    } else {
        result = await withTaskCancellationHandler {
            await withCheckedContinuation { k in
                DedicatedThread.start(canceller: canceller, named, then: { k.resume(returning: $0) })
            }
        } onCancel: {
            canceller.cancel()
        }
    }
    return try result.get()
}

/// A task executor whose every job runs on a thread of its own (`DedicatedThread`'s), where it may block: a task
/// that prefers it does its blocking work in place (`offPool(inPlace: true)`) instead of handing it to another thread
/// and waiting to be woken on the cooperative pool. A bridged MCP call crossed three threads that way, and the
/// switching was most of its CPU.
package final class BlockingTaskExecutor: TaskExecutor {
    package static let shared = BlockingTaskExecutor()

    private static let key: pthread_key_t = {
        var k = pthread_key_t()
        pthread_key_create(&k, nil)
        return k
    }()

    /// Whether this thread runs a job of this executor.
    package static var isCurrent: Bool { pthread_getspecific(key) != nil }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        DedicatedThread.start {
            pthread_setspecific(Self.key, UnsafeRawPointer(bitPattern: 1))
            job.runSynchronously(on: executor)
            pthread_setspecific(Self.key, nil)
            // What the job's work left of OpenSSL's state goes before the thread parks or ends (see `DedicatedThread`).
            Crypto.releaseThreadState()
        }
    }
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

/// A thread of its own for one piece of blocking work.
package enum DedicatedThread {
    /// Runs `work` on a thread of its own with `canceller` as its `CurrentCanceller`, then frees the thread's
    /// OpenSSL state and only then hands the result over (`then`): the thread may end right after, and its OpenSSL
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
        /// The signal mask of the thread that asked for the work: the work runs under it, as on a thread of its own.
        package let mask: sigset_t
        init(_ body: @escaping () -> Void) {
            self.body = body
            var mask = sigset_t()
            pthread_sigmask(SIG_BLOCK, nil, &mask)
            self.mask = mask
        }
    }

    /// Threads whose work ended, waiting for more. A thread made per piece of work cost a bridged MCP call a fifth of its
    /// CPU (`clone`, the stack, the thread's end); a few kept threads serve one call after another. A parked thread holds
    /// no OpenSSL state (`start(canceller:_:then:)` frees it before handing over) and never ends, so none races the
    /// process's exit.
    private struct Parked {
        var waiting = 0
        var queue: [Work] = []
    }
    private static let parkedMax = 4
    nonisolated(unsafe) private static let lock: UnsafeMutablePointer<pthread_mutex_t> = {
        let m = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        pthread_mutex_init(m, nil)
        return m
    }()
    nonisolated(unsafe) private static let wake: UnsafeMutablePointer<pthread_cond_t> = {
        let c = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
        pthread_cond_init(c, nil)
        return c
    }()
    nonisolated(unsafe) private static var parked = Parked()

    /// Runs `body` on a thread of its own: a parked one when there is one, else a new detached thread. Either way it
    /// runs under the calling thread's signal mask.
    public static func start(_ body: @escaping @Sendable () -> Void) {
        let work = Work(body)
        pthread_mutex_lock(lock)
        if parked.waiting > parked.queue.count {
            parked.queue.append(work)
            pthread_cond_signal(wake)
            pthread_mutex_unlock(lock)
            return
        }
        pthread_mutex_unlock(lock)
        let context = Unmanaged.passRetained(work).toOpaque()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        defer { pthread_attr_destroy(&attributes) }
        var thread = pthread_t()
        let rc = pthread_create(&thread, &attributes, { context in
            var work: Work? = Unmanaged<Work>.fromOpaque(context!).takeRetainedValue()
            while true {
                // The work (and all its closure holds: a client, a transport) is let go before the thread parks.
                if let w = work {
                    work = nil
                    var mask = w.mask
                    pthread_sigmask(SIG_SETMASK, &mask, nil)
                    w.body()
                }
                guard let next = DedicatedThread.next() else { return nil }
                work = next
            }
        }, context)
        if rc != 0 {
            // No thread to be had: run it on Dispatch's pool rather than not at all.
            let w = Unmanaged<Work>.fromOpaque(context).takeRetainedValue()
            nonisolated(unsafe) let run = w.body
            DispatchQueue.global().async { run() }
        }
    }

    /// The next work for a thread whose work ended: it waits for some while fewer than `parkedMax` wait; nil ends it.
    private static func next() -> Work? {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        guard parked.waiting < parkedMax else { return nil }
        parked.waiting += 1
        while parked.queue.isEmpty { pthread_cond_wait(wake, lock) }
        parked.waiting -= 1
        return parked.queue.removeFirst()
    }
}
