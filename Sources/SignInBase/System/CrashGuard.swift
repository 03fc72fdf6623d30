import CSignInSystem
#if canImport(Glibc)
import Glibc
#endif

/// signin's memory holds tokens, so nothing may copy it out: no core file (RLIMIT_CORE 0), no ptrace or
/// `/proc/PID/mem` by the same user's other processes (not dumpable), and Swift's crash backtracer, whose report
/// dumps registers and the memory they point to, replaced by a one-line message for every signal that would dump
/// core (SIGQUIT included). `SIGNIN_DEBUG_CRASH=1` keeps the process dumpable and the full backtrace, for developers.
package enum CrashGuard {
    static let fatalSignals = [SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGFPE, SIGABRT, SIGQUIT, SIGSYS, SIGXCPU]

    /// Installs the guard (and makes the process undumpable); call first thing in main.
    /// `version` goes in the crash report; `stateDirectory` (`$XDG_STATE_HOME/signin`) is where it is kept too.
    package static func install(version: String = SignInKitVersion.string, stateDirectory: String? = nil) {
        if getenv("SIGNIN_DEBUG_CRASH").map({ String(cString: $0) }) == "1" { return }
        ProcessHardening.apply()
        signin_crash_prepare(version, stateDirectory ?? Self.defaultStateDirectory())
        for sig in fatalSignals {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { sig in
                // The report (the crashing thread's frames as module+offset: no argument, register or memory), then
                // a fixed text, then _exit: written with write(2) and nothing that allocates.
                if sig != SIGQUIT { signin_crash_report(sig) }
                let message = sig == SIGQUIT
                    ? "signin: quit (SIGQUIT); no core file is written (it would hold tokens); the credential store is intact.\n"
                    : "signin: internal error (signal \(sig)); the credential store is intact (writes are atomic). Please report it.\n"
                message.withCString { p in _ = write(2, p, strlen(p)) }
                _exit(sig == SIGQUIT ? 128 + SIGQUIT : 1)
            }
            sigemptyset(&action.sa_mask)
            action.sa_flags = 0
            sigaction(sig, &action, nil)
        }
        // A parent may have blocked them (some launchers do): a `kill -QUIT` must still end signin this way.
        var set = sigset_t()
        sigemptyset(&set)
        for sig in fatalSignals { sigaddset(&set, sig) }
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }

    /// The state folder (`ProcessEnvironment.stateDirectory`), read with getenv: this runs on every start, so it
    /// neither builds the environment's dictionary nor asks the user database; nil without an absolute home.
    static func defaultStateDirectory() -> String? {
        let xdg = getenv("XDG_STATE_HOME").map { String(cString: $0) }
        let home = getenv("HOME").map { String(cString: $0) }.flatMap { $0.hasPrefix("/") ? $0 : nil }
        guard xdg?.hasPrefix("/") == true || home != nil else { return nil }
        return ProcessEnvironment.stateDirectory(xdgStateHome: xdg, home: home ?? "/")
    }
}
