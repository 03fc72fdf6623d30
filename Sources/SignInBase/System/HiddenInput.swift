import CSignInSystem

/// A hidden prompt's terminal: echo off, and back on however the prompt ends (a return, Ctrl-C, SIGTERM, a
/// closed terminal), so a person is never left typing blind.
package enum HiddenInput {
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
