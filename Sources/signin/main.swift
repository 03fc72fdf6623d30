// The `signin` command line: argv, text, JSON and exit codes over SignInKit. No protocol logic lives here.
import SignInKit
import SignInCLI

#if canImport(Glibc)
import Glibc
#endif

// The hand-over points the library announces: the release build's static half hands the run to signin-dynamic there.
// Debug builds check that nothing is written before the first one (a write before it would happen twice).
HandOver.install()
// Before anything holds a token: no core file, no ptrace by the same user's other processes, and the signals our
// parent had us ignore noted (children get them ignored again, everything else at its default).
ProcessHardening.recordInheritedSignals()
CrashGuard.install()
// SIGINT, SIGTERM and SIGHUP wait while a token request is in flight, until its answer is saved: a one-use
// rotating refresh token is never spent without the new one being kept.
SignalHolding.install()
// A full disk or a file size limit must be a clear error from write(2), not a silent death by SIGXFSZ.
Posix.ignore(SIGXFSZ)
// A reader that goes away (`signin token | head -c0`) must not kill us mid-write of the store.
Posix.ignore(SIGPIPE)
// The name it runs under chooses a command too (docker-credential-signin, a link, is `docker-credential`).
let code = CLI.main(program: CommandLine.arguments.first ?? "signin", Array(CommandLine.arguments.dropFirst()))
Posix.exit(code)
