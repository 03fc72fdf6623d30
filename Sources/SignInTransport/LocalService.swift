import SignInBase
import Dispatch

/// The life of a local server, written once for the OAuth redirect listener, the metadata server and the agent:
/// its server (whose loop, `LoopbackServer.serve`, a caller runs with this service's `canceller`), serving on a
/// thread of its own (`start`), stopping (the request in hand answered first, then the sockets closed), and hearing
/// when serving ended by itself (the agent's `POST /v1/stop`). A server is then its handler plus this; the command
/// around a long-running one blocks the stop signals, starts it, says where it listens, waits for a signal and stops
/// it (the CLI's `ServerLife.untilStopSignal`).
package final class LocalService: @unchecked Sendable {
    package let server: LoopbackServer
    /// Cuts the wait for the next request short; never a request in hand (a refresh in flight must be saved).
    package let canceller = Canceller()
    private let finished = DispatchSemaphore(value: 0)
    private let running = Locked(false)

    package init(_ server: LoopbackServer) { self.server = server }

    /// Runs `serve` (the server's loop, with `canceller`) on a thread of its own; `onEnd` runs there when serving
    /// ended by itself rather than by `stop()`.
    package func start(_ serve: @escaping @Sendable () -> Void, onEnd: @escaping @Sendable () -> Void = {}) {
        running.withLock { $0 = true }
        // No canceller as the thread's `CurrentCanceller`: stopping must let a refresh in flight finish and be
        // saved (a rotated refresh token is spent once sent), so only the wait for the next request is cut short.
        DedicatedThread.start(canceller: nil, { [self] in
            serve()
            server.close()
            if !canceller.isCanceled { onEnd() }
        }, then: { [finished] _ in finished.signal() })
    }

    /// Ends serving after the request in hand and waits until every socket is closed (a Unix socket's file removed).
    package func stop() {
        canceller.cancel()
        if running.withLock({ $0 }) { finished.wait() }
        server.close()
    }
}
