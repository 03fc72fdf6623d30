import CSignInSystem
#if canImport(Glibc)
import Glibc
#endif

/// What the `signin` command does to itself before anything else, and what every child it starts gets back.
package enum ProcessHardening {
    /// No core file and no ptrace by the same user's other processes (signin's memory holds tokens). True when
    /// the kernel agreed.
    @discardableResult
    public static func apply() -> Bool { signin_process_harden() == 0 }

    /// Whether a core file could be written of this process now.
    public static var dumpable: Bool { signin_process_dumpable() != 0 }

    /// Notes the signals our parent had us ignore (call first thing in main), so children get them ignored too.
    public static func recordInheritedSignals() { signin_signals_record_inherited() }

    /// Replaces this process with `arguments[0]` (`path`, or searched in `$PATH` when `searchPath`), which starts
    /// with an empty signal mask and default dispositions (but those the parent ignored) whichever thread calls
    /// this: the reset and the exec are one C call, so nothing runs between them. Returns only when the exec
    /// failed, with its errno.
    public static func replaceImage(path: String, arguments: [String], searchPath: Bool) -> Int32 {
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for p in argv { free(p) } }
        return signin_exec(path, &argv, searchPath ? 1 : 0)
    }

    /// `replaceImage`, its failure as the system layer hands errors on (it returns only when exec failed).
    package static func replacingImage(path: String, arguments: [String], searchPath: Bool) -> SystemError {
        SystemError(code: replaceImage(path: path, arguments: arguments, searchPath: searchPath))
    }
}
