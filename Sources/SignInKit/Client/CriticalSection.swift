import CSystem

/// Marks the span from sending a token request until its answer is saved. A provider that rotates one-use
/// refresh tokens has already spent the old one once the request is sent: a process stopped in between loses
/// the grant. A program that calls `SignalHolding.install()` (the `signin` command does) has SIGINT, SIGTERM and
/// SIGHUP held for that span and acted on right after the save; elsewhere this costs two atomic operations.
enum CriticalSection {
    static func run<T>(_ body: () throws(SignInError) -> T) throws(SignInError) -> T {
        signin_signals_hold_begin()
        defer { signin_signals_hold_end() }
        return try body()
    }
}

/// Opt-in for programs that want SIGINT, SIGTERM and SIGHUP held during token requests (see `CriticalSection`).
/// Outside those spans the signals keep their default effect.
public enum SignalHolding {
    /// Installs the handlers; call once, early in `main`.
    public static func install() { signin_signals_install_hold() }
}

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

/// A hidden prompt's terminal: echo off, and back on however the prompt ends (a return, Ctrl-C, SIGTERM, a
/// closed terminal), so a person is never left typing blind.
@_spi(CLI) public enum HiddenInput {
    /// Turns echo off on `fd`; false when it is not a terminal.
    public static func echoOff(_ fd: Int32) -> Bool { signin_tty_echo_off(fd) == 0 }
    /// Turns it back on (after `echoOff`).
    public static func restore() { signin_tty_echo_restore() }

    /// From now on SIGINT, SIGTERM and SIGHUP print `message` and exit with `code` (an interactive command that
    /// has written nothing yet: canceled, nothing changed).
    public static func cancelOnSignals(code: Int32, message: StaticString) {
        signin_cancel_on_signals(code, UnsafeRawPointer(message.utf8Start).assumingMemoryBound(to: CChar.self))
    }
}
