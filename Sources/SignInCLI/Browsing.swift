import SignInKit

/// How a sign-in reaches a browser, decided once per run and only for commands that may sign in.
struct Browsing {
    /// No browser will be opened here: `--no-browser`, or no display, or SSH (an explicit `$BROWSER` wins).
    let headless: Bool
    /// The address the browser ended at may be pasted on standard input: always without a local browser,
    /// otherwise when a person is at a terminal in the foreground (reading a terminal from the background
    /// would stop the process). Never with `--device`, and never for a bridge, whose standard input is not ours.
    let paste: Bool

    static let none = Browsing(headless: false, paste: false)

    private init(headless: Bool, paste: Bool) {
        self.headless = headless
        self.paste = paste
    }

    /// `noBrowser`: `--no-browser`; `paste`: the command reads a pasted answer (a login, not a bridge, not `--device`).
    init(noBrowser: Bool, paste: Bool, _ env: [String: String]) {
        headless = noBrowser || !Browser.localBrowserLikely(environment: env)
        self.paste = paste && (headless || (Posix.isatty(0) && Posix.tcgetpgrp(0) == Posix.getpgrp()))
    }
}
