import FoundationEssentials
@_spi(CLI) import SignInKit

// What several commands share: printing a profile, dates, padding, the encrypted store, typed blocking awaits, the
// rule that a command takes no words it does not declare.

/// The profile as `login`, `restore` and `whoami` print it (`verb` first, or JSON).
func printProfile(_ user: SignInUser, _ c: Context, verb: String?) {
    if c.json {
        out(JSONText.object(JSONText.user(user)))
    } else {
        out(verb.map { "\($0) \(user.profile.displayName)" } ?? user.profile.displayName)
    }
}

/// `spec`'s command takes no word but the ones it declares.
func noPositional(_ a: Arguments, _ spec: CommandSpec) throws(UsageError) {
    if let extra = a.positional.first { throw UsageError("`signin \(spec.name)` takes no argument \"\(extra)\"") }
}

/// `blockingAwait` for typed-throwing work.
func blockingAwaitTyped<T: Sendable>(_ body: @escaping @Sendable () async throws(SignInError) -> T) throws(SignInError) -> T {
    do { return try blockingAwait { try await body() } } catch let e as SignInError { throw e } catch { throw .system(reason: "\(error)") }
}

func iso8601(_ d: Date) -> String { d.formatted(.iso8601) }

extension String {
    func padding(to width: Int) -> String { count >= width ? self : self + String(repeating: " ", count: width - count) }
}

extension SignInClient {
    /// The command always keeps credentials in the encrypted file store (CLI.run builds the client so).
    var fileStore: CredentialStore { credentialStore! }
}
