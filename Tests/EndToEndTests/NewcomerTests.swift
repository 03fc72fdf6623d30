import Foundation
import Testing

/// What a newcomer trips on (issue 41), through the shipped scripts where they can be.
@Suite struct NewcomerTests {
    /// Item 1 and 5: `scripts/provider strict &` (in the background, as a person starts it to keep the terminal)
    /// keeps running rather than stopping on terminal input, prints commands that name a signin this shell can run
    /// when none is on PATH, and ends with its provider on SIGTERM.
    @Test func theProviderScriptRunsInTheBackgroundAndNamesARunnableSignin() throws {
        let out = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("provider-\(UUID().uuidString).out")
        defer { try? FileManager.default.removeItem(at: out) }
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        let p = Process()
        // As a shell starts it: an empty signal mask (the test runner's children may start with signals blocked).
        p.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        p.arguments = ["-c", "import os, signal, sys; signal.pthread_sigmask(signal.SIG_SETMASK, []); os.execv(sys.argv[1], sys.argv[1:])",
                       Paths.repo.appendingPathComponent("scripts/provider").path, "strict"]
        p.environment = ["PATH": "/usr/bin:/bin", "HOME": NSTemporaryDirectory(), "SIGNIN_TEST_BINARY": ""]
        p.standardOutput = try FileHandle(forWritingTo: out)
        p.standardError = FileHandle.nullDevice
        p.standardInput = FileHandle.nullDevice
        try p.run()
        var text = ""
        #expect(waitFor(seconds: 120) {
            text = (try? String(contentsOf: out, encoding: .utf8)) ?? ""
            return text.contains("Stop it with")
        }, "the script printed its commands: \(text)")
        let login = text.split(separator: "\n").first { $0.contains(" login && ") }.map(String.init) ?? ""
        let named = login.trimmingCharacters(in: .whitespaces).split(separator: " ").first.map(String.init) ?? ""
        #expect(named.hasPrefix("/") && FileManager.default.isExecutableFile(atPath: named), "a signin this shell can run: \(login)")
        #expect(p.isRunning, "still running with its standard input closed")
        kill(p.processIdentifier, SIGTERM)
        p.waitUntilExit()
        #expect(p.terminationStatus == 0)
        let issuer = text.split(separator: "\n").first { $0.hasPrefix("issuer: ") }.map { String($0.dropFirst(8)) } ?? ""
        #expect(waitFor { (try? Subprocess.run("/usr/bin/curl", ["-s", "-o", "/dev/null", "--max-time", "2", issuer + "/.well-known/openid-configuration"]).status) != 0 },
                "the provider ended with the script")
    }
}
