import Foundation
import Testing

/// Text a provider chose never rewrites what the person reads on the terminal.
@Suite struct TerminalSafetyTests {
    /// Escape sequences and line breaks from a provider never reach the terminal; JSON keeps the value, escaped.
    @Test func controlCharactersFromTheProviderAreNotPrinted() throws {
        let strict = try Shared.strict.get()
        let hostile = "Mallory\u{1B}[2K\rAlice Example\u{9B}0m"
        let box = try strict.signedInSandbox(["id_token_claims": ["name": hostile, "email": "alice@example.org\r\n\u{1B}[1A"]])
        for cmd in ["whoami", "status", "restore"] {
            let r = try box.signin(cmd)
            #expect(r.status == 0)
            #expect(!r.stdout.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x9B || $0.value == 0x0D }, "\(cmd): \(r.stdout.debugDescription)")
            #expect(r.stdout.contains("Mallory[2KAlice Example0m <alice@example.org[1A>"), "\(cmd): \(r.stdout.debugDescription)")
        }
        let json = try box.signin("whoami", "--json")
        #expect(json.stdout.contains(#"Mallory\u001b[2K\rAlice Example"#), "\(json.stdout)")
        try strict.control(box.clientID, ["token_fault": "invalid_request", "error_description": "ok\u{1B}]0;owned\u{07}\r\nsigned in as root"])
        let e = try box.signin("token", "--force-refresh")
        #expect(e.status == 5)
        #expect(!e.stderr.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 || $0.value == 0x0D }, "\(e.stderr.debugDescription)")
        #expect(e.stderr.components(separatedBy: "\n").filter { !$0.isEmpty }.count == 1, "one line: \(e.stderr.debugDescription)")
    }
}
