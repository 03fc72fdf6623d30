import Dispatch

/// Work started now on a thread of its own whose result is collected later; a failure reads as nil (the caller
/// then does the work itself and reports its error).
///
/// The worker thread never owns the result: it holds this object unretained, so the result (OpenSSL keys, for
/// the JWKS) is freed by its consumer, never by a thread still winding down while the process exits and
/// OpenSSL's exit handlers run.
package final class Prefetch<T: Sendable>: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private var result: T?

    package init(_ work: @escaping @Sendable () throws(SignInError) -> T) {
        // The caller's cancellation reaches the prefetch's transfer too.
        let canceller = CurrentCanceller.value
        let unowned = Unmanaged.passUnretained(self)
        DedicatedThread.start(canceller: canceller, { try? work() }, then: { value in
            let me = unowned.takeUnretainedValue()
            me.result = value
            me.done.signal()
            me.finished.signal()  // the last touch: after this the thread holds nothing of ours
        })
    }

    deinit {
        // Never free this while the worker may still touch it.
        finished.wait()
    }

    /// Waits for the work to finish.
    package var value: T? {
        done.wait()
        done.signal()
        return result
    }
}
