import Dispatch

/// Runs async work from synchronous code and waits for it (the main thread has nothing else to do).
func blockingAwait<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let box = ResultBox<T>()
    let done = DispatchSemaphore(value: 0)
    Task {
        do { box.result = .success(try await body()) } catch { box.result = .failure(error) }
        done.signal()
    }
    done.wait()
    return try box.result!.get()
}

/// Written by the task before the semaphore is signalled, read after the wait: no concurrent access.
final class ResultBox<T>: @unchecked Sendable {
    var result: Result<T, Error>?
}
