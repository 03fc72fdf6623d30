import SignInKit

/// The options that chose this run's configuration and account (`--profile`, `$SIGNIN_PROFILE`, `-c`,
/// `--account`), so that advice repeats them.
struct Invocation: Sendable {
    let command: String?
    var configuration: [String] = []
    var account: String?
    /// The configuration file this run read, once known.
    var configurationPath: String?
    /// The API this run is for (`--resource URL` of a command for one API's sign-in): `login` is suggested with it.
    var resource: String?

    init(_ a: Arguments, _ env: [String: String], command: String?) {
        self.command = command
        if let c = a.value(.config) { configuration = ["-c", c] } else if let p = a.value(.profile) ?? env["SIGNIN_PROFILE"].flatMap({ $0.isEmpty ? nil : $0 }) {
            configuration = ["--profile", p]
        }
        account = a.value(.account)
    }

    /// `signin NAME` with this run's configuration (and account, where the command takes one).
    func command(_ name: String, account withAccount: Bool = true) -> String {
        var words = ["signin", name] + configuration
        if name == "login", let resource { words += ["--resource", resource] }
        if withAccount, let account { words += ["--account", account] }
        return words.map(Self.quoted).joined(separator: " ")
    }

    /// A word as a POSIX shell reads it back.
    static func quoted(_ w: String) -> String {
        let safe: Set<UInt8> = Set("@%+=:,./_-".utf8)
        let plain = !w.isEmpty && w.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x7A) || safe.contains($0) }
        return plain ? w : "'" + w.replacing("'", with: "'\\''") + "'"
    }
}
