import SignInBase
import CSignInSystem
import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// Opens a URL in the person's browser without waiting for it: `$BROWSER`, else `wslview` on WSL, else `xdg-open`.
package enum Browser {
    public typealias Outcome = BrowserLaunch

    /// Whether this session looks like it can show a browser here (a display, no SSH, or an explicit `$BROWSER`).
    public static func localBrowserLikely(environment: [String: String]) -> Bool {
        if let b = environment["BROWSER"], !b.isEmpty { return true }
        if environment["SSH_CONNECTION"] != nil || environment["SSH_TTY"] != nil { return false }
        if isWSL, findExecutable("wslview", environment: environment) != nil { return true }
        return hasDisplay(environment) || portal(environment) != nil
    }

    static func hasDisplay(_ environment: [String: String]) -> Bool {
        (environment["DISPLAY"] ?? "").isEmpty == false || (environment["WAYLAND_DISPLAY"] ?? "").isEmpty == false
    }

    /// The desktop portal's `OpenURI` through `gdbus`, where a session bus is named (the user's, `DesktopSession`)
    /// and no display is: a page opens in the session's browser from the bus alone (an MCP client's stripped
    /// environment). Nil when there is no bus or no `gdbus`.
    static func portal(_ environment: [String: String]) -> String? {
        guard (environment["DBUS_SESSION_BUS_ADDRESS"] ?? "").isEmpty == false else { return nil }
        return findExecutable("gdbus", environment: environment)
    }

    static var isWSL: Bool {
        Posix.firstLine(of: "/proc/sys/kernel/osrelease")?.lowercased().contains("microsoft") ?? false
    }

    static func findExecutable(_ name: String, environment: [String: String]) -> String? {
        ExecutableSearch.locate(name, environment: environment)
    }

    /// The argv to run: `$BROWSER` (first of a colon-separated list; `%s` replaced by the URL), never through a
    /// shell, so `&` and `=` in the URL reach the browser unchanged.
    package static func command(for url: String, environment: [String: String]) -> [String]? {
        if let b = environment["BROWSER"], !b.isEmpty {
            let first = String(b.split(separator: ":").first ?? Substring(b))
            var argv = first.split(separator: " ").map(String.init)
            if argv.contains(where: { $0.contains("%s") }) {
                argv = argv.map { $0.replacing("%s", with: url) }
            } else {
                argv.append(url)
            }
            return argv
        }
        if isWSL, let w = findExecutable("wslview", environment: environment) { return [w, url] }
        if !hasDisplay(environment), let gdbus = portal(environment) {
            return [gdbus, "call", "--session", "--dest", "org.freedesktop.portal.Desktop", "--object-path", "/org/freedesktop/portal/desktop",
                    "--method", "org.freedesktop.portal.OpenURI.OpenURI", "", url, "{}"]
        }
        if let x = findExecutable("xdg-open", environment: environment) { return [x, url] }
        return nil
    }

    /// Starts the browser and returns at once; its output goes to /dev/null and it is reaped in the background.
    /// `onFailure` is called (on another thread) if the browser command exits unsuccessfully.
    /// As `open`, for a caller that cannot wait on a page nobody will see: a launcher that fails within `window`
    /// (`gdbus` with no portal on the bus, `xdg-open` with nothing to open with) is `.unavailable` with its reason; one
    /// still running after it is taken to be a browser.
    public static func openOrSayWhyNot(_ url: String, environment: [String: String], window: Duration = .seconds(3)) -> Outcome {
        let failure = Locked<String?>(nil)
        let ended = DispatchSemaphore(value: 0)
        let outcome = Self.open(url, environment: environment, onFailure: { reason in failure.withLock { $0 = reason } }, onEnd: { ended.signal() })
        guard case .launched = outcome else { return outcome }
        _ = ended.wait(timeout: .now() + .milliseconds(Int(window / .milliseconds(1))))
        if let reason = failure.withLock({ $0 }) { return .unavailable(reason: reason) }
        return outcome
    }

    public static func open(_ url: String, environment: [String: String], onFailure: @escaping @Sendable (String) -> Void = { _ in }) -> Outcome {
        Self.open(url, environment: environment, onFailure: onFailure, onEnd: {})
    }

    static func open(_ url: String, environment: [String: String], onFailure: @escaping @Sendable (String) -> Void, onEnd: @escaping @Sendable () -> Void) -> Outcome {
        guard let argv = command(for: url, environment: environment) else {
            return .unavailable(reason: "no browser command found (set $BROWSER, or install xdg-utils)")
        }
        guard let exe = findExecutable(argv[0], environment: environment) else {
            // $BROWSER is set, but names nothing that can run: say so, rather than ask for it to be set.
            if let b = environment["BROWSER"], !b.isEmpty {
                return .unavailable(reason: "$BROWSER names \(argv[0].withoutControlCharacters), which is not a program that can be run (not found, or not executable)")
            }
            return .unavailable(reason: "no browser command found (set $BROWSER, or install xdg-utils)")
        }
        // Nothing of ours reaches the browser (the key prefetch's sockets included); it stays in our session, so that
        // Ctrl-C reaches its launcher too. It sees the environment this client was given (the process's by default).
        let child: ChildProcess
        switch ChildProcess.spawnQuiet(path: exe, argv: argv, environment: environment, newSession: false) {
        case .success(let started): child = started
        case .failure(let f): return .unavailable(reason: "could not start \(argv[0]): \(f.error)")
        }
        let name = argv[0]
        DispatchQueue.global(qos: .utility).async {
            guard let ended = child.wait() else { onEnd(); return }
            switch ended {
            case .signaled(let signal): onFailure("\(name) was killed by signal \(signal)")
            case .exited(let code) where code != 0:
                onFailure(name.hasSuffix("gdbus") ? "the desktop portal could not open the page (gdbus exited with status \(code): no org.freedesktop.portal.Desktop on the session bus?)"
                                                  : "\(name) exited with status \(code)")
            case .exited: break
            }
            onEnd()
        }
        return .launched(command: argv[0])
    }
}
