import Foundation
import Testing

/// `scripts/provider`, the way a newcomer tries signin against the project's own providers: it prints a configuration
/// that signs in, runs in the background, names a signin this shell can run, and offers the newer features' switches.
@Suite struct ProviderScriptTests {
    /// `scripts/provider strict` never reads a terminal (so `scripts/provider strict &` keeps running
    /// rather than stopping on terminal input; here its standard input is a pipe held open), prints commands that name
    /// a signin this shell can run when none is on PATH, and ends with its provider on SIGTERM.
    @Test func theProviderScriptRunsInTheBackgroundAndNamesARunnableSignin() throws {
        let script = try ProviderScript(["strict"])
        let text = script.printed()
        #expect(text.contains("Stop it with"), "the script printed its commands: \(text)")
        let login = text.split(separator: "\n").first { $0.contains(" login && ") }.map(String.init) ?? ""
        let named = login.trimmingCharacters(in: .whitespaces).split(separator: " ").first.map(String.init) ?? ""
        #expect(named.hasPrefix("/") && FileManager.default.isExecutableFile(atPath: named), "a signin this shell can run: \(login)")
        #expect(script.process.isRunning, "still running while its standard input is open")
        #expect(script.stop() == 0)
        let issuer = script.line("issuer: ")
        #expect(waitFor { (try? Subprocess.run("/usr/bin/curl", ["-s", "-o", "/dev/null", "--max-time", "2", issuer + "/.well-known/openid-configuration"]).status) != 0 },
                "the provider ended with the script")
    }

    /// the strict provider's switches are documented (`--help`) and do what they say: DPoP and PAR offered by
    /// discovery, a short token lifetime; a misspelt switch is exit 2.
    @Test func theProviderScriptsSwitchesOfferTheNewerFeatures() throws {
        let script = Paths.repo.appendingPathComponent("scripts/provider").path
        let help = try Subprocess.run(script, ["--help"])
        #expect(help.status == 0 && help.stdout.contains("--dpop") && help.stdout.contains("try-locally.md"), "\(help.stdout)")
        #expect(try Subprocess.run(script, ["strict", "--dpopp"]).status == 2)
        let provider = try ProviderScript(["strict", "--dpop", "--par", "--token-ttl", "20"])
        let text = provider.printed()
        #expect(text.contains("Stop it with"), "\(text)")
        let issuer = provider.line("issuer: ")
        let discovery = try Subprocess.run("/usr/bin/curl", ["-s", issuer + "/.well-known/openid-configuration"]).stdout
        #expect(discovery.contains("dpop_signing_alg_values_supported") && discovery.contains("pushed_authorization_request_endpoint"), "\(discovery)")
        let config = provider.line("configuration: ")
        let box = try Sandbox(issuer: issuer, clientID: "try-it")
        box.environment["SIGNIN_CONFIG"] = config
        #expect(try box.signin("login").status == 0)
        let json = try box.signin("token", "--json").stdout
        #expect(json.contains(#""token_type":"DPoP""#), "\(json)")
        let expiry = ((try? JSONSerialization.jsonObject(with: Data(json.utf8))) as? [String: Any])?["expires_at"] as? String ?? ""
        let at = ISO8601DateFormatter().date(from: expiry) ?? .distantFuture
        #expect(at.timeIntervalSinceNow < 25, "the token lives --token-ttl: \(expiry)")
    }

    @Test func scriptsProviderPrintsAConfigurationThatSignsIn() throws {
        let process = Process()
        process.executableURL = Paths.repo.appendingPathComponent("scripts/provider")
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        var text = ""
        while !text.contains("Stop it with Ctrl-C.") {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        let line = text.split(separator: "\n").first { $0.hasPrefix("configuration: ") }.map(String.init) ?? ""
        let config = String(line.dropFirst("configuration: ".count))
        #expect(!config.isEmpty, "\(text)")
        #expect(!text.contains("Warning") && !text.contains("deprecat"), "\(text)")
        let home = NSTemporaryDirectory() + "signin-try-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: home) }
        let env = ["HOME": home, "PATH": "/usr/local/bin:/usr/bin:/bin", "SIGNIN_CONFIG": config, "XDG_DATA_HOME": home + "/data",
                   "BROWSER": Paths.providers.appendingPathComponent("browser_standin.py").path]
        let login = try Subprocess.run(Paths.signin, ["login"], env: env)
        #expect(login.status == 0 && login.stdout.contains("Signed in as"), "\(login.stdout) \(login.stderr)")
        #expect(try Subprocess.run(Paths.signin, ["logout", "--yes"], env: env).status == 0)
        try input.fileHandleForWriting.close()
        process.waitUntilExit()
        #expect(!FileManager.default.fileExists(atPath: config), "the provider's folder is removed when it stops")
    }
}

/// `scripts/provider ARGS` started as a shell starts it (an empty signal mask: the test runner's children may start
/// with signals blocked), its standard input a pipe held open and its output in a file; SIGTERM ends it.
final class ProviderScript {
    let process = Process()
    private let out = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("provider-\(UUID().uuidString).out")
    private let input = Pipe()

    init(_ arguments: [String]) throws {
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [Paths.providers.appendingPathComponent("signal_mask.py").path, "clear",
                             Paths.repo.appendingPathComponent("scripts/provider").path] + arguments
        process.environment = ["PATH": "/usr/bin:/bin", "HOME": NSTemporaryDirectory()]
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = FileHandle.nullDevice
        process.standardInput = input
        try process.run()
    }

    /// What it printed once it printed its commands (up to two minutes), or what it printed by then.
    func printed() -> String {
        var text = ""
        _ = waitFor(seconds: 120) { text = (try? String(contentsOf: out, encoding: .utf8)) ?? ""; return text.contains("Stop it with") }
        return text
    }

    /// The rest of the printed line that starts with `prefix` (`issuer: `, `configuration: `).
    func line(_ prefix: String) -> String {
        printed().split(separator: "\n").first { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)) } ?? ""
    }

    private var reaped: Int32?

    /// SIGTERM, then its exit status. Reaped here when Foundation's `Process` does not notice the end: it learns of it
    /// from SIGCHLD, which another thread of this test process (a test waiting on a child of its own) may take first,
    /// and `waitUntilExit()` then never returns (seen once: the script a zombie, the suite stuck).
    @discardableResult
    func stop() -> Int32 {
        if let reaped { return reaped }
        let pid = process.processIdentifier
        if process.isRunning { kill(pid, SIGTERM) }
        var status: Int32 = 0
        _ = waitFor(seconds: 120) {
            if !process.isRunning { return true }
            guard waitpid(pid, &status, WNOHANG) == pid else { return false }
            reaped = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
            return true
        }
        if let reaped { return reaped }
        process.waitUntilExit()
        return process.terminationStatus
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: out)
    }
}

