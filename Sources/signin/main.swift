// The `signin` command line: argv, text, JSON and exit codes over SignInKit. No protocol logic lives here.
import SignInKit

#if canImport(Glibc)
import Glibc
#endif

CrashGuard.install()
let code = CLI.main(Array(CommandLine.arguments.dropFirst()))
exit(code)
