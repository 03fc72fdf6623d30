#if canImport(Glibc)
import Glibc
#endif

/// The rules every system call here follows, written once.
package enum SystemCall {
    /// `body` again while it fails with EINTR (a signal arrived meanwhile, and was handled): the one place that
    /// retry is written. Any other result, success or failure, is returned as it is (errno kept).
    @inlinable
    public static func retrying<T: BinaryInteger>(_ body: () -> T) -> T {
        while true {
            let r = body()
            if r < 0 && errno == EINTR { continue }
            return r
        }
    }
}
