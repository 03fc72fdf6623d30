import Foundation
import Synchronization
import SignInKit
import SignInTransport
import Testing

/// A `signin` started now and collected later, to run several at once. Each waits for its process on a thread of its
/// own: a block on Dispatch's shared queue may wait for a thread behind other blocked work, and a run meant to be in
/// flight now would start seconds late.
final class ParallelRun: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private var result: Result<RunResult, Error> = .failure(HarnessError(description: "not run"))

    init(_ box: Sandbox, _ args: [String], env: [String: String] = [:], stdin: Data? = nil) throws {
        Thread {
            self.result = Result { try box.signin(args, env: env, stdin: stdin) }
            self.done.signal()
        }.start()
    }

    func wait() throws -> RunResult {
        done.wait()
        return try result.get()
    }
}

/// Polls `condition` (another process's state, which has no event to wait on) until it holds or `seconds` pass.
func waitFor(seconds: Double = 20, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if condition() { return true }
        usleep(10_000)
    }
    return condition()
}

/// `waitFor` for async tests: polls without blocking a thread of the cooperative pool (blocking one could starve
/// the very task being waited for). The bound is counted in polls, not read from the clock, as `watchdog`'s is: a
/// stall of the pool stalls the count with the work it waits for.
func eventually(seconds: Double = 20, _ condition: () -> Bool) async -> Bool {
    for _ in 0..<Int(seconds * 100) {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return condition()
}

/// A watchdog's wait for async tests: `seconds` counted in tenths, each a wake-up of its own. The suite's tests share
/// the cooperative pool's few threads with tests that block theirs for seconds; one long sleep would end "in time"
/// after such a stall while the awaited work, stalled as long, had not run yet. Counted in wake-ups, it stalls with it.
func watchdog(seconds: Double) async {
    for _ in 0..<Int(seconds * 10) where !Task.isCancelled {
        try? await Task.sleep(for: .milliseconds(100))
    }
}

/// Lets a test wait until an event handler has fired.
final class Waiter: @unchecked Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    func signal() { semaphore.signal() }
    func wait() async {
        await withCheckedContinuation { (k: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                self.semaphore.wait()
                k.resume()
            }
        }
    }
}
