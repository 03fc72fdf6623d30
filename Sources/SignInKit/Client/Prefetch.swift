import Dispatch

/// Work started now on a Dispatch thread whose result is collected later; a failure reads as nil (the caller
/// then does the work itself and reports its error).
final class Prefetch<T: Sendable>: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private var result: T?

    init(_ work: @escaping @Sendable () throws(SignInError) -> T) {
        // The caller's cancellation reaches the prefetch's transfer too.
        let canceller = CurrentCanceller.value
        DedicatedThread.start {
            CurrentCanceller.set(canceller)
            defer { CurrentCanceller.set(nil) }
            self.result = try? work()
            self.done.signal()
        }
    }

    /// Waits for the work to finish.
    var value: T? {
        done.wait()
        done.signal()
        return result
    }
}
