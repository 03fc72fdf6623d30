import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// Runs blocking work (sockets, libcurl, file locks) on a Dispatch thread, off Swift's cooperative pool, whose
/// few threads (two here) must never wait on the network or a person. Cancelling the calling task cancels the
/// work at once: the listener's wait ends, and every transfer in flight has its socket shut down (`HTTPClient`
/// finds the canceller through `CurrentCanceller`).
func offPool<T: Sendable>(_ body: @escaping @Sendable (Canceller) throws(SignInError) -> T) async throws(SignInError) -> T {
    let canceller = Canceller()
    let result: Result<T, SignInError> = await withTaskCancellationHandler {
        await withCheckedContinuation { k in
            DispatchQueue.global().async {
                CurrentCanceller.set(canceller)
                defer { CurrentCanceller.set(nil) }
                do throws(SignInError) { k.resume(returning: .success(try body(canceller))) } catch { k.resume(returning: .failure(error)) }
            }
        }
    } onCancel: {
        canceller.cancel()
    }
    return try result.get()
}

/// The canceller of the work running on this thread (a thread-local: the work runs on a Dispatch thread, where
/// task-locals do not reach).
enum CurrentCanceller {
    private static let key: pthread_key_t = {
        var k = pthread_key_t()
        pthread_key_create(&k, nil)
        return k
    }()

    static func set(_ c: Canceller?) {
        if let old = pthread_getspecific(key) { Unmanaged<Canceller>.fromOpaque(old).release() }
        pthread_setspecific(key, c.map { Unmanaged.passRetained($0).toOpaque() })
    }

    static var value: Canceller? {
        pthread_getspecific(key).map { Unmanaged<Canceller>.fromOpaque($0).takeUnretainedValue() }
    }
}
