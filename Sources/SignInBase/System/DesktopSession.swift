#if canImport(Glibc)
import Glibc
#endif

/// The person's desktop session, found from the session itself when the environment lacks it. MCP clients start
/// `signin mcp` with only `HOME LOGNAME PATH SHELL TERM USER`: the session still runs, and its runtime folder, bus
/// and display are where the login manager put them. Each is taken only when it is this user's own, as strictly as
/// the store's folder is checked, never another's:
///
/// 1. `XDG_RUNTIME_DIR`, when unset: `/run/user/UID`, when it is a folder (not a link) that this user owns and no
///    one else may enter (0700), as systemd-logind makes it.
/// 2. `DBUS_SESSION_BUS_ADDRESS`, when unset: `unix:path=$XDG_RUNTIME_DIR/bus`, when that is a socket this user owns
///    (the user bus, where the keyring, the desktop portal and the user manager answer).
/// 3. `WAYLAND_DISPLAY`, when neither it nor `DISPLAY` is set: `wayland-0`, when `$XDG_RUNTIME_DIR/wayland-0` is a
///    socket this user owns. X11's `DISPLAY` cannot be told from a socket's owner and is never guessed: the desktop
///    portal (`Browser`) opens a page from the bus alone.
package enum DesktopSession {
    /// What was found, for a notice.
    package struct Found: Sendable, Equatable {
        package var names: [String] = []
    }

    /// `environment` with what it lacks of the session filled in (see the type), and the names filled in.
    package static func completing(_ environment: [String: String], runtimeRoot: String = "/run/user") -> ([String: String], Found) {
        var env = environment
        var found = Found()
        func missing(_ name: String) -> Bool { (env[name] ?? "").isEmpty }
        let uid = Posix.geteuid()
        if missing("XDG_RUNTIME_DIR") {
            let candidate = "\(runtimeRoot)/\(uid)"
            if case .success(let st) = Posix.status(ofLink: candidate), st.kind == .directory, st.isOurs, st.isPrivate {
                env["XDG_RUNTIME_DIR"] = candidate
                found.names.append("XDG_RUNTIME_DIR")
            }
        }
        guard let runtime = env["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") else { return (env, found) }
        func ownSocket(_ path: String) -> Bool {
            if case .success(let st) = Posix.status(ofLink: path), st.kind == .socket, st.isOurs { return true }
            return false
        }
        if missing("DBUS_SESSION_BUS_ADDRESS"), ownSocket(runtime + "/bus") {
            env["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=\(runtime)/bus"
            found.names.append("DBUS_SESSION_BUS_ADDRESS")
        }
        if missing("WAYLAND_DISPLAY"), missing("DISPLAY"), ownSocket(runtime + "/wayland-0") {
            env["WAYLAND_DISPLAY"] = "wayland-0"
            found.names.append("WAYLAND_DISPLAY")
        }
        return (env, found)
    }

    /// Puts the names `found` of `environment` into this process's own environment, for the libraries that read it
    /// there (libsecret's D-Bus connection). Call it before any other thread runs: `setenv` is not thread-safe.
    package static func export(_ found: Found, from environment: [String: String]) {
        for name in found.names { if let value = environment[name] { Posix.setenv(name, value, 0) } }
    }
}
