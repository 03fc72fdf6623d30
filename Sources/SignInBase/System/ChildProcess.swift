import CSignInSystem
#if canImport(Glibc)
import Glibc
#endif

/// A command signin starts and stays beside (`exec --gce-metadata`): it inherits the terminal and standard
/// streams, gets an empty signal mask and default dispositions, and signals sent to signin go on to it.
package struct ChildProcess: Sendable {
    /// How the child ended.
    public enum Termination: Sendable, Equatable {
        case exited(Int32)
        case signaled(Int32)
    }

    public let pid: pid_t

    /// Why a child could not be started (`errno`).
    public struct SpawnFailure: Error {
        public let errno: Int32
        /// The same, as the system layer hands errors on.
        package var error: SystemError { SystemError(code: errno) }
    }

    /// Blocks the signals the wait passes on, in this thread and every thread started after: call it before
    /// starting any thread (a server) that must not take them.
    public static func prepareSignalForwarding() { signin_forwarding_block() }

    /// Starts `path` with `argv` and `environment`; `closing` are descriptors of signin's the child must not get.
    public static func spawn(path: String, argv: [String], environment: [String: String], closing: [Int32] = []) -> Result<ChildProcess, SpawnFailure> {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for fd in closing where fd > 2 { posix_spawn_file_actions_addclose(&actions, fd) }
        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        signin_spawnattr_clean_signals(&attr)
        return spawn(path, argv, environment, &actions, &attr)
    }

    /// Starts `path` as a daemon: its own session (no terminal), standard streams on /dev/null, nothing else of
    /// signin's open, not waited for (the agent `signin ssh` starts on demand).
    public static func spawnDetached(path: String, argv: [String], environment: [String: String]) -> Result<ChildProcess, SpawnFailure> {
        spawnQuiet(path: path, argv: argv, environment: environment, newSession: true)
    }

    /// Starts `path` with standard streams on /dev/null and nothing else of signin's open, whatever other threads
    /// hold right now (libcurl's sockets are not close-on-exec, nor is what our parent left us); in a session of
    /// its own with `newSession`. An empty signal mask and default dispositions, as every child.
    package static func spawnQuiet(path: String, argv: [String], environment: [String: String], newSession: Bool) -> Result<ChildProcess, SpawnFailure> {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        signin_spawn_file_actions_addclosefrom(&actions, 3)
        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        signin_spawnattr_clean_signals(&attr)
        if newSession {
            var flags: Int16 = 0
            posix_spawnattr_getflags(&attr, &flags)
            // POSIX_SPAWN_SETSID (0x80, glibc 2.26), which the Glibc module does not export.
            posix_spawnattr_setflags(&attr, flags | 0x80)
        }
        return spawn(path, argv, environment, &actions, &attr)
    }

    private static func spawn(_ path: String, _ argv: [String], _ environment: [String: String],
                              _ actions: inout posix_spawn_file_actions_t, _ attr: inout posix_spawnattr_t) -> Result<ChildProcess, SpawnFailure> {
        var pid: pid_t = 0
        let rc = SpawnArrays.with(argv, environment) { cargs, cenv in posix_spawn(&pid, path, &actions, &attr, cargs, cenv) }
        return rc == 0 ? .success(ChildProcess(pid: pid)) : .failure(SpawnFailure(errno: rc))
    }

    /// Waits for the child, passing on the signals other processes send signin (see `prepareSignalForwarding`).
    public func waitForwardingSignals() -> Termination {
        var status: Int32 = 0
        guard signin_forwarding_wait(pid, &status) == 0 else { return .exited(127) }
        return Self.termination(status)
    }

    /// A wait status decoded: the one place it is.
    /// Waits for this child to end and reaps it; with `block` false, only looks (nil: it is still running). The one
    /// `waitpid` of signin's Swift code.
    public func wait(block: Bool = true) -> Termination? {
        var status: Int32 = 0
        guard SystemCall.retrying({ waitpid(pid, &status, block ? 0 : WNOHANG) }) == pid else { return nil }
        return Self.termination(status)
    }

    public static func termination(_ status: Int32) -> Termination {
        let signal = status & 0x7f
        return signal != 0 ? .signaled(signal) : .exited((status >> 8) & 0xff)
    }

    /// Ends signin as the child ended: with its status, or by the same signal.
    public static func endAs(_ t: Termination) -> Int32 {
        switch t {
        case .exited(let code): return code
        case .signaled(let sig):
            signin_reraise(sig)
            return 128 + sig
        }
    }

    /// Blocks SIGINT, SIGTERM and SIGHUP for a server that runs until one arrives (before starting its thread).
    public static func blockStopSignals() { signin_stop_signals_block() }
    /// Waits for SIGINT, SIGTERM or SIGHUP; returns which.
    public static func waitForStopSignal() -> Int32 { signin_stop_signals_wait() }

    package init(pid: pid_t) {
        self.pid = pid
    }
}

/// argv and an environment as the NULL-terminated C arrays `posix_spawn` takes, alive for `body`'s call only.
enum SpawnArrays {
    package static func with<R>(_ argv: [String], _ environment: [String: String],
                        _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>, UnsafePointer<UnsafeMutablePointer<CChar>?>) -> R) -> R {
        let cargs: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        let cenv: [UnsafeMutablePointer<CChar>?] = environment.sorted { $0.key < $1.key }.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            cargs.forEach { free($0) }
            cenv.forEach { free($0) }
        }
        return cargs.withUnsafeBufferPointer { a in cenv.withUnsafeBufferPointer { e in body(a.baseAddress!, e.baseAddress!) } }
    }
}
