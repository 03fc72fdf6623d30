import SignInBase

/// Whether the system browser was started for a sign-in.
public enum BrowserLaunch: Sendable, Equatable {
    /// The command that was started (`$BROWSER`, `xdg-open`, `wslview`); it may still fail later (`.browserFailed`).
    case launched(command: String)
    /// No browser could be started, and why; the person can open the URL by hand.
    case unavailable(reason: String)
}
