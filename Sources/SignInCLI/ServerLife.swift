import Dispatch
import SignInKit
#if canImport(Glibc)
import Glibc
#endif

/// How the CLI's long-running work lives around its command, written once: a local server until a stop signal
/// (`metadata-server`, `agent`), and a command run beside a server or a helper thread (`exec --gce-metadata`,
/// `token-file`, `ssh`), with the signals forwarded and the command's end becoming signin's.
enum ServerLife {
    /// `metadata-server` and `agent`: the stop signals are blocked before any thread starts (so only this thread
    /// takes them), then `start` (which starts the server's thread) and `announce` (where it listens) run, then this
    /// thread waits for SIGINT, SIGTERM or SIGHUP, and `stop` ends the server (the request in hand answered first).
    /// A server that ends by itself (`signin agent --stop`) sends this process SIGTERM to end the wait.
    static func untilStopSignal(start: () throws(SignInError) -> Void, announce: () -> Void, stop: () -> Void) throws(SignInError) -> ExitCode {
        ChildProcess.blockStopSignals()
        try start()
        announce()
        _ = ChildProcess.waitForStopSignal()
        stop()
        return .success
    }

    /// Work this thread waits on that a stop signal ends (an interactive sign-in, the MCP bridge): SIGINT, SIGTERM and
    /// SIGHUP are taken from their defaults and call `onStop` (once each time one comes) while `body` runs; after it,
    /// the signals are held again as every command holds them (`SignalHolding`), so a token request in flight is saved.
    static func whileRunning<T>(onStop: @escaping @Sendable () -> Void, _ body: () throws(SignInError) -> T) throws(SignInError) -> T {
        Posix.ignore(SIGINT)
        Posix.ignore(SIGTERM)
        Posix.ignore(SIGHUP)
        let sources = [SIGINT, SIGTERM, SIGHUP].map { sig -> DispatchSourceSignal in
            let s = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            s.setEventHandler(handler: onStop)
            s.resume()
            return s
        }
        defer {
            sources.forEach { $0.cancel() }
            SignalHolding.install()
        }
        return try body()
    }

    /// A command beside a server or a helper: the signals to forward are blocked first (before any thread starts),
    /// `command` (at `path`, found beforehand) is spawned with `environment`, `started` runs once it has (a helper
    /// thread starts here), every forwardable signal goes to it until it ends, then `ended` runs; its exit status,
    /// or its signal (raised again on signin itself), is signin's. A command that cannot start: `cannotStart` runs
    /// and gets the errno, and its answer is the exit.
    static func running(_ command: [String], at path: String, environment: [String: String], closing: [Int32] = [],
                        started: () -> Void = {}, ended: () -> Void, cannotStart: (SystemError) throws(SignInError) -> ExitCode) throws(SignInError) -> ExitCode {
        ChildProcess.prepareSignalForwarding()
        let child: ChildProcess
        switch ChildProcess.spawn(path: path, argv: command, environment: environment, closing: closing) {
        case .success(let c): child = c
        case .failure(let f):
            ended()
            return try cannotStart(f.error)
        }
        started()
        let status = child.waitForwardingSignals()
        ended()
        return ExitCode(rawValue: ChildProcess.endAs(status))
    }
}
