import SignInBase
import SignInProtocol
import SignInStorage
import SignInGrant
import SignInTransport
import FoundationEssentials

/// A sign-in under way (`SignInClient.signInWithEvents()`): await its `value`, or cancel it.
///
/// Cancelling reaches the sign-in wherever it waits (the browser, discovery, the code exchange), and the listener
/// closes at once: by `cancel()`, by cancelling a task that awaits `value`, or by cancelling the task that iterates
/// the events (the stream then ends, and so does the sign-in). Every failure is a `SignInError`.
public struct SignInOperation<User: Sendable>: Sendable {
    let task: Task<Result<User, SignInError>, Never>

    /// The sign-in running in `task`.
    init(task: Task<Result<User, SignInError>, Never>) { self.task = task }

    /// The signed-in user once the sign-in ends; a cancelled awaiting task cancels the sign-in.
    public var value: User {
        get async throws(SignInError) {
            let task = self.task
            let result = await withTaskCancellationHandler {
                await task.value
            } onCancel: {
                task.cancel()
            }
            return try result.get()
        }
    }

    /// Cancels the sign-in: `value` then throws `.canceled`, and the listener's port is free.
    public func cancel() { task.cancel() }

    /// Whether the sign-in was cancelled.
    public var isCancelled: Bool { task.isCancelled }
}
