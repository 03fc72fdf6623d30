import Foundation
import SignInKit  // the public API only
import Testing

/// Cancelling a task stops SignInKit at once wherever it waits on the network, with `.canceled`, changing nothing;
/// but a token request already sent (a code exchange, a refresh: what it sent is spent) finishes and is saved first.
/// (Before, each network wait ran to `http_timeout` and then threw `.networkUnavailable`.)
@Suite struct CancellationTests {
    /// What the sign-in reported, for the failure message when the request never reached the server.
    let events = EventLog()

    func client(_ box: Sandbox, issuer: String) -> SignInClient {
        var config = SignInConfiguration(clientID: box.clientID, issuer: issuer)
        config.httpTimeout = .seconds(30)
        let log = events
        return SignInClient(configuration: config, storeDirectory: box.storeDir, environment: box.environment) { log.add("\($0)") }
    }

    /// Starts `work`, waits until `inFlight` says the request reached the server, cancels, and returns the error
    /// and how long the cancelled call took to return.
    ///
    /// All of it (the work, the watching, the cancel) runs on an executor of its own, not the cooperative pool:
    /// the other suites' synchronous tests hold the pool's threads (two on two cores) for most of a sanitizer run,
    /// so on the pool the work could start, or the cancel come, a minute late, and this test would measure the
    /// pool, not SignInKit.
    func cancelInFlight<T: Sendable>(_ work: @escaping @Sendable () async throws(SignInError) -> T, box: Sandbox,
                                     inFlight: @escaping @Sendable () -> Bool,
                                     afterCancel: @escaping @Sendable () -> Void = {}) async -> (SignInError?, TimeInterval) {
        let executor = OwnThreadExecutor()
        let (reached, error, elapsed) = await Task(executorPreference: executor) { () async -> (Bool, SignInError?, TimeInterval) in
            let timing = CancelTiming()
            let task = Task(executorPreference: executor) { () async throws(SignInError) -> T in
                defer { timing.returned() }
                return try await work()
            }
            let reached = await eventually(seconds: 120, inFlight)
            timing.canceled()
            task.cancel()
            afterCancel()
            if case .failure(let error) = await task.result { return (reached, error as? SignInError, timing.elapsed) }
            return (reached, nil, timing.elapsed)
        }.value
        #expect(reached, "the request reached the server; events so far: \(events.all); the browser stand-in's log: \(box.standinSteps())")
        return (error, elapsed)
    }

    func expectCanceledAtOnce(_ outcome: (SignInError?, TimeInterval), _ what: String) {
        guard case .canceled? = outcome.0 else { Issue.record("\(what): \(String(describing: outcome.0))"); return }
        #expect(outcome.1 < 5, "\(what) returned \(outcome.1) s after the cancel (http_timeout is 30 s)")
    }

    @Test func duringDiscovery() async throws {
        let silent = try SilentServer()
        let box = try Sandbox(issuer: silent.url)
        let c = client(box, issuer: silent.url)
        let outcome = await cancelInFlight({ () async throws(SignInError) -> SignInUser in try await c.signIn() }, box: box, inFlight: { silent.hasPendingConnection })
        expectCanceledAtOnce(outcome, "discovery")
    }

    /// A code exchange, once sent, has spent the code: a cancel waits for its answer (here the provider's refusal
    /// after 3 s), then `.canceled`; nothing is stored.
    @Test func duringTheCodeExchangeTheAnswerIsAwaitedThenCanceled() async throws {
        let strict = try Shared.strict.get()
        let box = try strict.sandbox(["token_fault": "slow", "slow_seconds": 3])
        let c = client(box, issuer: strict.issuer)
        let outcome = await cancelInFlight({ () async throws(SignInError) -> SignInUser in try await c.signIn() }, box: box,
                                           inFlight: { (try? strict.stats(box.clientID)["token_requests"] as? Int) == 1 })
        guard case .canceled? = outcome.0 else { Issue.record("code exchange: \(String(describing: outcome.0))"); return }
        #expect(outcome.1 < 20, "returned \(outcome.1) s after the cancel")
        #expect(!c.hasPreviousSignIn)
    }

    /// Fifth review, item 10: a refresh at a rotating provider, cancelled while its answer is on the way, finishes and
    /// is saved, then `.canceled`: the next start is still signed in (before: the rotated refresh token was dropped
    /// and the provider had ended the grant).
    @Test func duringARotatingRefreshTheAnswerIsSavedThenCanceled() async throws {
        let strict = try Shared.strict.get()
        let box = try strict.signedInSandbox(["rotate": true])
        let c = client(box, issuer: strict.issuer)
        // The answer is held at the provider until the cancel has been made, however slow the machine.
        try strict.control(box.clientID, ["refresh_hold": true])
        let outcome = await cancelInFlight({ () async throws(SignInError) -> SignInUser in try await c.restorePreviousSignIn(forceRefresh: true) }, box: box,
                                           inFlight: { (try? strict.stats(box.clientID)["refreshes"] as? Int) == 1 },
                                           afterCancel: { _ = try? strict.control(box.clientID, ["refresh_hold": false]) })
        guard case .canceled(let reason)? = outcome.0 else { Issue.record("refresh: \(String(describing: outcome.0))"); return }
        #expect(reason.contains("saved"), "\(reason)")
        let next = try box.signin("token", "--force-refresh")
        #expect(next.status == 0, "the rotated refresh token was kept: \(next.stderr)")
    }

    /// A refresh cancelled before its request goes out sends nothing and changes nothing.
    @Test func duringTheLockWaitBeforeARefreshNothingIsSent() async throws {
        let strict = try Shared.strict.get()
        let box = try strict.signedInSandbox()
        let c = client(box, issuer: strict.issuer)
        let before = box.storeSnapshot()
        try strict.control(box.clientID, ["token_fault": "slow", "slow_seconds": 25])
        let task = Task { () async throws(SignInError) -> SignInUser in
            withUnsafeCurrentTask { $0?.cancel() }
            return try await c.restorePreviousSignIn(forceRefresh: true)
        }
        guard case .failure(let e) = await task.result, case .canceled? = e as? SignInError else { Issue.record("not canceled"); return }
        #expect((try? strict.stats(box.clientID)["token_requests"] as? Int) == 1, "no refresh request was sent (the one request was the sign-in's)")
        #expect(box.storeSnapshot() == before)
        try strict.control(box.clientID, ["token_fault": NSNull()])
    }

    @Test func duringARevocationAndNothingIsRemoved() async throws {
        let strict = try Shared.strict.get()
        let box = try strict.signedInSandbox()
        let c = client(box, issuer: strict.issuer)
        try strict.control(box.clientID, ["revoke_fault": "slow", "slow_seconds": 25])
        let outcome = await cancelInFlight({ () async throws(SignInError) in try await c.disconnect() }, box: box,
                                           inFlight: { (try? strict.stats(box.clientID)["revocations"] as? Int) == 1 })
        expectCanceledAtOnce(outcome, "revocation")
        #expect(c.hasPreviousSignIn)
    }
}

/// Events a client reported, collected from any thread.
/// When the test cancelled, and when the cancelled work returned (on its own executor, so no pool delay counts).
final class CancelTiming: @unchecked Sendable {
    private let lock = NSLock()
    private var canceledAt: Date?
    private var returnedAt: Date?
    func canceled() { lock.lock(); canceledAt = Date(); lock.unlock() }
    func returned() { lock.lock(); returnedAt = Date(); lock.unlock() }
    var elapsed: TimeInterval {
        lock.lock(); defer { lock.unlock() }
        guard let c = canceledAt, let r = returnedAt else { return .infinity }
        return r.timeIntervalSince(c)
    }
}

/// A task executor on a serial dispatch queue of its own: its jobs never wait for the cooperative pool.
final class OwnThreadExecutor: TaskExecutor, @unchecked Sendable {
    private let queue = DispatchQueue(label: "CancellationTests")

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}

final class EventLog: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [String] = []
    func add(_ s: String) { lock.lock(); items.append(s); lock.unlock() }
    var all: [String] { lock.lock(); defer { lock.unlock() }; return items }
}
