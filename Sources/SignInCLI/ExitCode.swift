import SignInKit

/// Exit codes, the same for every command (README, `--help` and the man page list them).
struct ExitCode: Equatable, Sendable {
    let rawValue: Int32

    static let success = ExitCode(rawValue: 0)
    static let failure = ExitCode(rawValue: 1)
    static let usage = ExitCode(rawValue: 2)
    static let notSignedIn = ExitCode(rawValue: 3)
    static let canceled = ExitCode(rawValue: 4)
    static let network = ExitCode(rawValue: 5)
    static let timedOut = ExitCode(rawValue: 6)
    static let targetRefused = ExitCode(rawValue: 7)

    /// What each `SignInError` means for a script.
    init(_ e: SignInError) {
        switch e {
        case .noPreviousSignIn: self = .notSignedIn
        case .canceled, .scopesNotGranted: self = .canceled
        case .timedOut: self = .timedOut
        case .targetRefused: self = .targetRefused
        case .providerError, .networkUnavailable, .callbackRejected, .invalidIDToken, .revocationFailed, .rateLimited: self = .network
        case .configInvalid, .configNotFound, .unsupported, .accountNotFound, .ambiguousAccount, .passphraseRefused, .passphraseUnavailable: self = .usage
        case .mismatchWithCurrentUser, .scopesAlreadyGranted, .storeUnreadable, .storeUnwritable, .system, .listenerUnavailable, .rotatedGrantUnsaved: self = .failure
        }
    }

    init(rawValue: Int32) { self.rawValue = rawValue }

    static let table = """
        Exit codes (every command):
          0  success
          1  unexpected failure (including a credential store that cannot be used safely; the message says why)
          2  usage or configuration error (also: an account that matches nothing or several)
          3  not signed in (nothing stored, no account current, or the provider ended the sign-in)
          4  canceled (denied in the browser, Ctrl-C)
          5  network or provider error (nothing changed locally)
          6  timed out waiting for the browser
          7  the provider will not issue a token for that resource or audience (--resource, --audience)
        `signin exec` exits with its command's status once the command runs.
        """
}
