#if canImport(Glibc)
import Glibc
#endif

/// The process environment as a dictionary, read from `environ` (FoundationEssentials has no ProcessInfo
/// environment on every platform, and this avoids loading more of Foundation).
package enum ProcessEnvironment {
    /// The current environment variables (the first of a name counts, as for `getenv`). Read byte-wise: every
    /// command starts here, and Character-based splitting cost more than the cached `token`'s file reads.
    public static var current: [String: String] {
        var count = 0
        while environ[count] != nil { count += 1 }
        var env = [String: String](minimumCapacity: count)
        for k in 0..<count {
            guard let entry = environ[k] else { continue }
            let length = strlen(entry)
            let bytes = UnsafeRawPointer(entry).assumingMemoryBound(to: UInt8.self)
            guard let eq = memchr(entry, 0x3D, length) else { continue }
            let nameLength = UnsafeRawPointer(eq) - UnsafeRawPointer(entry)
            let name = String(decoding: UnsafeBufferPointer(start: bytes, count: nameLength), as: UTF8.self)
            if env[name] != nil { continue }
            env[name] = String(decoding: UnsafeBufferPointer(start: bytes + nameLength + 1, count: length - nameLength - 1), as: UTF8.self)
        }
        return env
    }

    /// One variable, without reading the whole environment; nil when unset or empty.
    public static func value(_ name: String) -> String? {
        guard let v = getenv(name) else { return nil }
        let s = String(cString: v)
        return s.isEmpty ? nil : s
    }

    /// The home folder: `$HOME` (a relative one taken from the working directory), else the user database's.
    /// This program's own executable (`/proc/self/exe`), to start another instance of it.
    public static var executablePath: String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard n > 0 else { return nil }
        return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// An XDG base folder: the variable that names it and where it is when that is unset.
    package enum XDGBase: String, Sendable {
        case data = "XDG_DATA_HOME", config = "XDG_CONFIG_HOME", state = "XDG_STATE_HOME"

        /// The folder under HOME when the variable is unset or relative.
        var underHome: String {
            switch self {
            case .data: return ".local/share"
            case .config: return ".config"
            case .state: return ".local/state"
            }
        }
    }

    /// The XDG rule, written once: `<value>/<appName>` when `value` (the base's variable) is absolute (a relative one
    /// is ignored, as the XDG specification says), else `HOME/<the base's folder>/<appName>` (`home` asked only then:
    /// it may ask the user database). The store (data), the configurations (config) and the state folder use it.
    package static func xdgFolder(_ base: XDGBase, appName: String, value: String?, home: @autoclosure () -> String) -> String {
        if let x = value, x.hasPrefix("/") { return x + "/" + appName }
        return home() + "/" + base.underHome + "/" + appName
    }

    /// `xdgFolder` with the variable and HOME read from `environment`.
    package static func xdgFolder(_ base: XDGBase, appName: String, environment: [String: String]) -> String {
        xdgFolder(base, appName: appName, value: environment[base.rawValue], home: home(environment))
    }

    /// signin's state folder (the agent's log, the crash report): the XDG rule for `$XDG_STATE_HOME`.
    package static func stateDirectory(xdgStateHome: String?, home: @autoclosure () -> String) -> String {
        xdgFolder(.state, appName: "signin", value: xdgStateHome, home: home())
    }

    public static func home(_ environment: [String: String]) -> String {
        if let h = environment["HOME"], !h.isEmpty { return absolute(h) }
        // The user database goes through NSS, which a static executable cannot load.
        HandOverPoint.require(.userDatabase)
        if let pw = getpwuid(getuid()), let dir = pw.pointee.pw_dir { return String(cString: dir) }
        return "/"
    }

    /// `path` made absolute against the working directory (a relative path would otherwise be taken from `/` by
    /// the folder-creating code).
    public static func absolute(_ path: String) -> String {
        if path.hasPrefix("/") { return path }
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return path }
        let cwd = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let rest = path.hasPrefix("./") ? String(path.dropFirst(2)) : path
        return (cwd == "/" ? "" : cwd) + "/" + rest
    }
}
