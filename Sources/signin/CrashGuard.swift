#if canImport(Glibc)
import Glibc
#endif

/// Replaces Swift's crash backtracer, whose report dumps registers and the memory they point to (where a token
/// may sit), with a one-line message. `SIGNIN_DEBUG_CRASH=1` keeps the full backtrace for developers.
enum CrashGuard {
    static func install() {
        if let v = getenv("SIGNIN_DEBUG_CRASH"), String(cString: v) == "1" { return }
        for sig in [SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGFPE, SIGABRT] {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { sig in
                let message = "signin: internal error (signal \(sig)); the credential store is intact (writes are atomic). Please report it.\n"
                message.withCString { p in _ = write(2, p, strlen(p)) }
                _exit(1)
            }
            sigemptyset(&action.sa_mask)
            action.sa_flags = 0
            sigaction(sig, &action, nil)
        }
    }
}
