import CSignInSystem

/// Marks the span from sending a token request until its answer is saved. A provider that rotates one-use
/// refresh tokens has already spent the old one once the request is sent: a process stopped in between loses
/// the grant. A program that calls `SignalHolding.install()` (the `signin` command does) has SIGINT, SIGTERM and
/// SIGHUP held for that span and acted on right after the save; elsewhere this costs two atomic operations.
///
/// A task cancelled in that span (`Task.cancel()` of a library caller) does not cut the request either: the
/// request finishes and its answer is saved, then `.canceled` is thrown (`Canceller.shielded`).
package enum CriticalSection {
    package static func run<T>(_ body: () throws(SignInError) -> T) throws(SignInError) -> T {
        signin_signals_hold_begin()
        defer { signin_signals_hold_end() }
        guard let canceller = CurrentCanceller.value else { return try body() }
        return try canceller.shielded(CurrentOperation.name ?? "the request", body)
    }
}

/// Opt-in for programs that want SIGINT, SIGTERM and SIGHUP held during token requests (see `CriticalSection`).
/// Outside those spans the signals keep their default effect.
public enum SignalHolding {
    /// Installs the handlers; call once, early in `main`.
    public static func install() { signin_signals_install_hold() }
}
