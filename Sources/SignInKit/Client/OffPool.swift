import Dispatch

/// Runs blocking work (sockets, libcurl, file locks) on a Dispatch thread, off Swift's cooperative pool, whose
/// few threads (two here) must never wait on the network or a person.
func offPool<T: Sendable>(_ body: @escaping @Sendable () throws(SignInError) -> T) async throws(SignInError) -> T {
    let result: Result<T, SignInError> = await withCheckedContinuation { k in
        DispatchQueue.global().async {
            do throws(SignInError) { k.resume(returning: .success(try body())) } catch { k.resume(returning: .failure(error)) }
        }
    }
    return try result.get()
}
