import CSystem
import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// Opens a URL in the person's browser without waiting for it: `$BROWSER`, else `wslview` on WSL, else `xdg-open`.
@_spi(CLI) public enum Browser {
    public typealias Outcome = BrowserLaunch

    /// Whether this session looks like it can show a browser here (a display, no SSH, or an explicit `$BROWSER`).
    public static func localBrowserLikely(environment: [String: String]) -> Bool {
        if let b = environment["BROWSER"], !b.isEmpty { return true }
        if environment["SSH_CONNECTION"] != nil || environment["SSH_TTY"] != nil { return false }
        if isWSL, findExecutable("wslview", environment: environment) != nil { return true }
        return (environment["DISPLAY"] ?? "").isEmpty == false || (environment["WAYLAND_DISPLAY"] ?? "").isEmpty == false
    }

    static var isWSL: Bool {
        guard let f = fopen("/proc/sys/kernel/osrelease", "r") else { return false }
        defer { fclose(f) }
        var buf = [CChar](repeating: 0, count: 256)
        guard fgets(&buf, 255, f) != nil else { return false }
        return String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self).lowercased().contains("microsoft")
    }

    static func findExecutable(_ name: String, environment: [String: String]) -> String? {
        ExecutableSearch.locate(name, environment: environment)
    }

    /// The argv to run: `$BROWSER` (first of a colon-separated list; `%s` replaced by the URL), never through a
    /// shell, so `&` and `=` in the URL reach the browser unchanged.
    static func command(for url: String, environment: [String: String]) -> [String]? {
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
        if let x = findExecutable("xdg-open", environment: environment) { return [x, url] }
        return nil
    }

    /// Starts the browser and returns at once; its output goes to /dev/null and it is reaped in the background.
    /// `onFailure` is called (on another thread) if the browser command exits unsuccessfully.
    public static func open(_ url: String, environment: [String: String], onFailure: @escaping @Sendable (String) -> Void = { _ in }) -> Outcome {
        guard let argv = command(for: url, environment: environment), let exe = findExecutable(argv[0], environment: environment) else {
            return .unavailable(reason: "no browser command found (set $BROWSER, or install xdg-utils)")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        // Nothing else of ours reaches the browser, whatever other threads hold open right now (libcurl's sockets
        // during the key prefetch are not close-on-exec, nor is whatever our parent left us).
        signin_spawn_file_actions_addclosefrom(&actions, 3)
        // An empty signal mask and default dispositions, whichever thread this is and whatever signin holds.
        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        signin_spawnattr_clean_signals(&attr)
        var pid: pid_t = 0
        // The browser sees the environment this client was given (the process's own by default).
        let rc = SpawnArrays.with(argv, environment) { cargs, cenv in posix_spawn(&pid, exe, &actions, &attr, cargs, cenv) }
        guard rc == 0 else { return .unavailable(reason: "could not start \(argv[0]): \(FileIO.errnoText(rc))") }
        let child = pid
        let name = argv[0]
        DispatchQueue.global(qos: .utility).async {
            var status: Int32 = 0
            guard waitpid(child, &status, 0) == child else { return }
            let signal = status & 0x7f, code = (status >> 8) & 0xff
            if signal != 0 { onFailure("\(name) was killed by signal \(signal)") }
            else if code != 0 { onFailure("\(name) exited with status \(code)") }
        }
        return .launched(command: argv[0])
    }
}
