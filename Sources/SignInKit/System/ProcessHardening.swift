import CSystem

/// What the `signin` command does to itself before anything else, and what every child it starts gets back.
@_spi(CLI) public enum ProcessHardening {
    /// No core file and no ptrace by the same user's other processes (signin's memory holds tokens). True when
    /// the kernel agreed.
    @discardableResult
    public static func apply() -> Bool { signin_process_harden() == 0 }

    /// Whether a core file could be written of this process now.
    public static var dumpable: Bool { signin_process_dumpable() != 0 }

    /// Notes the signals our parent had us ignore (call first thing in main), so children get them ignored too.
    public static func recordInheritedSignals() { signin_signals_record_inherited() }

    /// Just before `execvp`: an empty signal mask and default dispositions (but those the parent ignored).
    public static func resetSignalsForExec() { signin_signals_reset_for_exec() }
}
