#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Wakes a blocking wait (the loopback listener, device-flow polling) from another thread or a signal.
package final class Canceller: Sendable {
    private let flag = Atomic<Bool>(false)
    /// Sockets of transfers in flight: shut down at cancellation, so a waiting transfer ends at once; how many
    /// shielded sections (`shielded`) are running, during which a cancellation waits for the work to finish; and the
    /// pipe a wait polls (`pollFD`), made by the first wait that asks for it: most work (one request) never waits on
    /// it, and a bridged MCP call paid a pipe's making and closing for nothing.
    private let state = Locked<(sockets: Set<Int32>, shielded: Int, pipe: (read: Int32, write: Int32)?)>(([], 0, nil))

    package init() {}

    deinit {
        if let (r, w) = state.withLock({ $0.pipe }) {
            Posix.close(r)
            Posix.close(w)
        }
    }

    package var isCanceled: Bool { flag.load(ordering: .acquiring) }
    /// Canceled, and not inside a shielded section: what a transfer checks before and after it runs.
    package var interrupts: Bool { isCanceled && state.withLock { $0.shielded == 0 } }
    /// A descriptor that becomes readable once `cancel()` was called, for `poll` (-1 where no pipe could be made).
    package var pollFD: Int32 {
        state.withLock { s -> Int32 in
            if let p = s.pipe { return p.read }
            var fds: [Int32] = [-1, -1]
            guard Posix.pipe(&fds) == 0 else { return -1 }
            for fd in fds {
                _ = Posix.fcntl(fd, F_SETFD, FD_CLOEXEC)
                _ = Posix.fcntl(fd, F_SETFL, O_NONBLOCK)
            }
            s.pipe = (fds[0], fds[1])
            // Canceled before anyone waited: readable at once.
            if isCanceled {
                var b: UInt8 = 1
                _ = Posix.write(fds[1], &b, 1)
            }
            return fds[0]
        }
    }

    /// Registers a transfer's socket; true when already canceled (the caller should give up), never inside a
    /// shielded section.
    package func watch(socket fd: Int32) -> Bool {
        state.withLock { s in
            s.sockets.insert(fd)
            guard isCanceled, s.shielded == 0 else { return false }
            Posix.shutdown(fd, Int32(SHUT_RDWR))
            return true
        }
    }

    package func unwatch(socket fd: Int32) { state.withLock { _ = $0.sockets.remove(fd) } }

    package func cancel() {
        state.withLock { s in
            flag.store(true, ordering: .releasing)
            // Inside a shielded section (a token request sent, its answer to be saved) nothing is cut: the work
            // finishes and the section's end reports the cancellation.
            if s.shielded == 0 { for fd in s.sockets { Posix.shutdown(fd, Int32(SHUT_RDWR)) } }
            if let p = s.pipe {
                var b: UInt8 = 1
                _ = Posix.write(p.write, &b, 1)
            }
        }
    }

    /// Runs `body`, which a cancellation does not interrupt: a token request that, once sent, has spent what it
    /// sent (a rotated refresh token, a code) and must finish and be saved. Canceled before it starts: nothing
    /// runs, `.canceled`. Canceled while it runs: it finishes (its answer saved), then `.canceled` says so.
    func shielded<T>(_ operation: String, _ body: () throws(SignInError) -> T) throws(SignInError) -> T {
        let started = state.withLock { s -> Bool in
            guard !isCanceled else { return false }
            s.shielded += 1
            return true
        }
        guard started else { throw .canceled(reason: "\(operation) was canceled before it started; nothing changed") }
        ShieldedWork.running.add(1, ordering: .sequentiallyConsistent)
        let result: Result<T, SignInError>
        do throws(SignInError) { result = .success(try body()) } catch { result = .failure(error) }
        ShieldedWork.running.subtract(1, ordering: .sequentiallyConsistent)
        state.withLock { $0.shielded -= 1 }
        if isCanceled {
            switch result {
            case .success: throw .canceled(reason: "\(operation) was canceled after its request was sent; it finished and its answer was saved")
            case .failure(let e): throw .canceled(reason: "\(operation) was canceled after its request was sent; it ran to its end: \(e.description)")
            }
        }
        return try result.get()
    }

    /// Waits up to `seconds`; returns true if canceled meanwhile.
    package func sleep(seconds: Double) -> Bool {
        if isCanceled { return true }
        let fd = pollFD
        if fd >= 0 { _ = Posix.isReadable(fd, milliseconds: Int32(max(0, seconds * 1000))) } else { Posix.usleep(UInt32(max(0, seconds * 1_000_000))) }
        return isCanceled
    }
}

/// The shielded sections running in this process (a token request sent, its answer to be saved): a process that ends
/// itself on a deadline (`signin mcp` within its client's grace) waits for them first, so a rotated refresh token is
/// never lost to the deadline.
package enum ShieldedWork {
    package static let running = Atomic<Int>(0)

    /// Waits (polling every 10 ms) until no shielded section runs, for at most `milliseconds`.
    package static func awaitNone(upTo milliseconds: Int) {
        var waited = 0
        while running.load(ordering: .sequentiallyConsistent) > 0 && waited < milliseconds {
            Posix.usleep(10_000)
            waited += 10
        }
    }
}
