import Dispatch
import FoundationEssentials
import Synchronization
import SignInKit

#if canImport(Glibc)
import Glibc
#endif

/// `signin exec --token-file [--id-token] [--file-env NAME]... -- COMMAND`: COMMAND reads the token from a file that
/// signin keeps fresh for as long as COMMAND runs (the form AWS_WEB_IDENTITY_TOKEN_FILE, AZURE_FEDERATED_TOKEN_FILE
/// and Kubernetes' projected tokens take), where a token in the environment would go stale in a long run.
///
/// 1. A fresh token is written (atomically, 0600) to a new file in the user's runtime folder (the agent's folder:
///    `$XDG_RUNTIME_DIR/signin`, else `/tmp/signin-UID`, which must be the user's alone). None to be had: the
///    error, and COMMAND does not start.
/// 2. COMMAND starts with the file's path in `SIGNIN_TOKEN_FILE` and in each `--file-env NAME`; signin stays beside it
///    and passes signals on.
/// 3. Before the token expires (a third of its life before, between 5 s and 5 min), a fresh one replaces the file
///    atomically: COMMAND never reads a half-written or an expired token. A refresh that fails is said once on
///    standard error and tried again in 10 s; the file keeps the last good token meanwhile.
/// 4. When COMMAND ends, however it ends, the file is removed, and signin exits with COMMAND's status (or signal).
/// 5. The file's name holds this signin's pid and start time: a signin killed before step 4 (SIGKILL) leaves a file
///    that the next `--token-file` run removes, since its owner is gone.
final class TokenFileRun: @unchecked Sendable {
    /// Where a renewal's failure is said.
    private let io: IOStreams
    private let source: any TokenSource
    private let kind: TokenKind
    private let target: TokenTarget
    private let minTTL: Int
    private let path: String
    private let stopped = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)
    private let expiry = Mutex<Date?>(nil)
    /// `Bearer` or `DPoP`, as the first token was presented (`IssuedToken.presented(to: .typed)`; set before COMMAND
    /// starts, and a grant's binding does not change while it runs).
    private let tokenType = Mutex("")
    private var complained = false

    init(source: some TokenSource, kind: TokenKind, target: TokenTarget = TokenTarget(), minTTL: Int, environment: [String: String], io: IOStreams) throws(SignInError) {
        self.io = io
        self.target = target
        self.source = source
        self.kind = kind
        self.minTTL = minTTL
        path = try AgentProtocol.newOwnedRuntimeFile("token-", environment: environment)
    }

    /// Writes the first token, runs COMMAND beside the renewing thread, removes the file at the end.
    func run(_ command: [String], variables: [String], environment: [String: String], closing: [Int32]) throws(SignInError) -> ExitCode {
        try renew(minimumValidity: minTTL)
        guard let exe = ExecCommand.locate(command, environment: environment, io) else {
            Posix.unlink(path)
            return ExecCommand.notFound
        }
        var env = environment
        for name in ["SIGNIN_TOKEN_FILE"] + variables { env[name] = path }
        env["SIGNIN_TOKEN_TYPE"] = tokenType.withLock { $0 }
        var renewing = false
        return try ServerLife.running(command, at: exe, environment: env, closing: closing, started: {
            // Started after the signals are blocked: the renewing thread must not take them.
            renewing = true
            DedicatedThread.start { [self] in keepFresh() }
        }, ended: {
            if renewing {
                stopped.signal()
                done.wait()
            }
            Posix.unlink(path)
        }, cannotStart: { e in ExecCommand.cannotRun(command, e, io) })
    }

    /// Replaces the file with a token valid for `minimumValidity` more.
    private func renew(minimumValidity: Int) throws(SignInError) {
        let issued = try source.token(kind, Freshness(minTTL: minimumValidity), for: target)
        let (type, value) = try issued.presented(to: .typed)
        try TextFiles.write(value, to: path, mode: 0o600)
        expiry.withLock { $0 = issued.token.expirationDate }
        tokenType.withLock { $0 = type }
    }

    /// Until COMMAND ends: wake a third of the token's remaining life before it expires and renew it.
    private func keepFresh() {
        defer { done.signal() }
        while true {
            let left = expiry.withLock { $0.map { $0.timeIntervalSinceNow } } ?? 3600
            let margin = min(300, max(5, left / 3))
            let wait = max(1, left - margin)
            if stopped.wait(timeout: .now() + .milliseconds(Int(wait * 1000))) == .success { return }
            do throws(SignInError) {
                // Asked to stay valid beyond the margin: the stored token is refreshed now.
                try renew(minimumValidity: Int(margin) + 5)
                complained = false
            } catch {
                if !complained { io.err("signin: the token file could not be renewed (\(error.description)); it keeps the last token, and signin tries again.") }
                complained = true
                if stopped.wait(timeout: .now() + .seconds(10)) == .success { return }
            }
        }
    }
}
