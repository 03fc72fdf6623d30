import SignInKit
import SignInBase

/// The hand-over's one condition, checked in debug builds: the static half of the release build hands a run to the
/// dynamic half (`HandOver`) only before it has written anything (standard output or error, a file),
/// or the run's first part would happen twice. The debug build has no static half, so it checks the order instead:
/// every write notes itself here until the run's first `require` (where the static half would have handed over),
/// and that `require` stops the process, naming the first write, when one came before it. The whole test suite runs
/// on the debug build, so each hand-over site is checked on every path a test takes. Release builds compile none
/// of this.
enum HandOverCheck {
    #if DEBUG
    private struct State {
        var firstWrite: String?
        /// The signin executable's run only: a program on SignInKit is not the two-halves program, and has no "first
        /// part" to run twice.
        var passed = true
    }
    private static let state = Locked(State())
    #endif

    /// Starts checking: the signin executable calls this first thing, in debug builds.
    static func beginRun() {
        #if DEBUG
        state.withLock { $0 = State(firstWrite: nil, passed: false) }
        #endif
    }

    /// Notes a write (`what` says which) made before the run's first hand-over point, if there has been none yet.
    @inline(__always) static func wrote(_ what: @autoclosure () -> String) {
        #if DEBUG
        state.withLock { s in if !s.passed && s.firstWrite == nil { s.firstWrite = what() } }
        #endif
    }

    /// The run reached a hand-over point: the first one must come before any write.
    static func reachedHandOver(_ need: String) {
        #if DEBUG
        let first: String? = state.withLock { s in
            defer { s.passed = true }
            return s.passed ? nil : s.firstWrite
        }
        if let first {
            FileIO.writeStandardError("signin: internal error: the static half would hand this run over (\(need)) after it wrote \(first); the first part would run twice. Move the write after the hand-over.\n")
            Posix.abort()
        }
        #endif
    }
}

/// The `signin` executable's side of the hand-over points the library announces (`HandOverPoint`): in the static half
/// of the release build, the run goes to `signin-dynamic` there (nothing was written yet); where it cannot, it says why
/// and exits 1. Debug builds check the order (`HandOverCheck`). Installed by the executable's first line.
public enum HandOver {
    public static func install() {
        HandOverPoint.install(.init(require: { need in
            HandOverCheck.reachedHandOver(need.description)
            guard DynamicSibling.isStatic else { return }
            // Before any command has its streams: this process's standard error, where a person running it looks.
            IOStreams.standard.err("signin: " + DynamicSibling.replaceProcess(because: need.description))
            Posix.exit(1)
        }, wrote: { HandOverCheck.wrote($0) }))
        HandOverCheck.beginRun()
    }
}
