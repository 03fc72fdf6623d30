#if canImport(Glibc)
import Glibc
#endif

/// Seconds on the monotonic clock (never set back, unlike the wall clock): deadlines for waits.
package enum MonotonicClock {
    /// Seconds on the monotonic clock.
    public static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}
