#if canImport(Glibc)
import Glibc
#endif

/// Crash points for the fault tests: with `SIGNIN_FAILPOINT=<name>` the process kills itself (SIGKILL, as
/// `kill -9` would) when it reaches that point, so a test can prove a crash at each step of a store write
/// leaves the old or the new credentials. Unset (always, in normal use), a hit costs one comparison.
package enum Failpoint {
    private static let armed: String? = Posix.getenv("SIGNIN_FAILPOINT")

    package static func hit(_ name: String) {
        guard let armed, armed.hasPrefix(name) else { return }
        if armed == name { Posix.kill(Posix.getpid(), SIGKILL) }
        // `<name>:SIGSEGV`: an internal error there instead (the crash report's test).
        if armed == name + ":SIGSEGV" { Posix.kill(Posix.getpid(), SIGSEGV) }
    }
}
