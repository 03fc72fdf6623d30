// The `signin` command line: argv, text, JSON and exit codes over SignInKit. No protocol logic lives here.
import SignInKit

#if canImport(Glibc)
import Glibc
#endif

CrashGuard.install()
// A full disk or a file size limit must be a clear error from write(2), not a silent death by SIGXFSZ.
signal(SIGXFSZ, SIG_IGN)
// A reader that goes away (`signin token | head -c0`) must not kill us mid-write of the store.
signal(SIGPIPE, SIG_IGN)
let code = CLI.main(Array(CommandLine.arguments.dropFirst()))
exit(code)
