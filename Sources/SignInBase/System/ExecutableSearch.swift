#if canImport(Glibc)
import Glibc
#endif

/// Finding a program as a shell would, in `$PATH` (default `/usr/local/bin:/usr/bin:/bin`): the one place it is written.
package enum ExecutableSearch {
    /// Where `name` is: itself when it holds a `/`, else the first `PATH` folder that has it. With `executable`, only
    /// a file this process may run counts; without, any file of that name (to tell "not found" from "not runnable").
    public static func locate(_ name: String, environment: [String: String], executable: Bool = true) -> String? {
        let mode = executable ? X_OK : F_OK
        if name.contains("/") { return access(name, mode) == 0 ? name : nil }
        for dir in (environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":") {
            let p = "\(dir)/\(name)"
            if access(p, mode) == 0 { return p }
        }
        return nil
    }
}
