import SignInKit

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
