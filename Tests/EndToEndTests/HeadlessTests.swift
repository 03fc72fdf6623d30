import Foundation
import Testing

/// A `signin` whose standard error is read as it comes and whose standard input is written on the fly.
final class LiveRun: @unchecked Sendable {
    let process = Process()
    private let input = Pipe()
    private let errPipe = Pipe()
    private let outPipe = Pipe()
    private(set) var stderrText = ""

    init(_ box: Sandbox, _ args: [String], env extra: [String: String] = [:]) throws {
        process.executableURL = URL(fileURLWithPath: Paths.signin)
        process.arguments = args
        var env = box.environment
        env.merge(extra) { $1 }
        process.environment = env.filter { !$0.value.isEmpty }
        process.standardInput = input
        process.standardError = errPipe
        process.standardOutput = outPipe
        try process.run()
    }

    /// Reads standard error until `pattern` has appeared (or the process ends); returns what matched.
    func waitFor(_ pattern: String) -> String? {
        let regex = try! NSRegularExpression(pattern: pattern)
        while true {
            if let m = regex.firstMatch(in: stderrText, range: NSRange(stderrText.startIndex..., in: stderrText)),
               let r = Range(m.range(at: m.numberOfRanges > 1 ? 1 : 0), in: stderrText) {
                return String(stderrText[r])
            }
            let chunk = errPipe.fileHandleForReading.availableData
            if chunk.isEmpty { return nil }
            stderrText += String(decoding: chunk, as: UTF8.self)
        }
    }

    func send(_ line: String) { input.fileHandleForWriting.write(Data((line + "\n").utf8)) }

    func finish() -> RunResult {
        try? input.fileHandleForWriting.close()
        let out = outPipe.fileHandleForReading.readDataToEndOfFile()
        stderrText += String(decoding: errPipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return RunResult(status: process.terminationStatus, stdout: String(decoding: out, as: UTF8.self), stderr: stderrText)
    }
}

/// Where the provider would send the browser: its 302 Location, fetched without following it.
func providerRedirect(_ authorizeURL: String) throws -> String {
    let r = try Subprocess.run("/usr/bin/curl", ["-sS", "-o", "/dev/null", "-w", "%{redirect_url}", "--data", "sub=alice", authorizeURL])
    return r.stdout
}

@Suite struct HeadlessTests {
    let headless = ["BROWSER": "", "DISPLAY": "", "WAYLAND_DISPLAY": ""]

    @Test func pasteBackSignsInAfterRefusingAWrongStatePaste() throws {
        let strict = try Shared.strict.get()
        let box = try Sandbox(issuer: strict.issuer)
        let run = try LiveRun(box, ["login", "--no-browser"])
        let url = try #require(run.waitFor(#"(http://127\.0\.0\.1:\d+/authorize\?\S+)"#))
        let landing = try providerRedirect(url)  // the page that "could not load" in the remote browser
        #expect(landing.hasPrefix("http://127.0.0.1:") && landing.contains("code="))
        let forged = landing.replacingOccurrences(of: #"state=[^&]+"#, with: "state=forged", options: .regularExpression)
        run.send(forged)
        #expect(run.waitFor("That address was refused") != nil)
        run.send(landing)
        let r = run.finish()
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == "Signed in as Alice Example <alice@example.org>\n")
        #expect(try strict.stats(box.clientID)["code_exchanges"] as? Int == 1)
    }

    @Test func noDisplayPrintsTheWaysThroughAndDoesNotHang() throws {
        let strict = try Shared.strict.get()
        let box = try Sandbox(issuer: strict.issuer)
        let r = try box.signin(["login", "--timeout", "2"], env: headless.merging(["SSH_CONNECTION": "10.0.0.2 5000 10.0.0.1 22", "USER": "ann"]) { $1 })
        #expect(r.status == 6, "\(r.stderr)")
        #expect(r.stderr.contains("To sign in, visit:"))
        #expect(r.stderr.contains("/authorize?"))
        #expect(r.stderr.range(of: #"ssh -L (\d+):127\.0\.0\.1:\1 ann@10\.0\.0\.1"#, options: .regularExpression) != nil)
        #expect(r.stderr.contains("signin login --device"))
        #expect(r.stderr.contains("paste it here"))
    }

    @Test func fixedPortIsUsedForTheRedirect() throws {
        let strict = try Shared.strict.get()
        // Find a free port by binding 0, release it, and ask signin for it.
        let probe = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = in_addr_t(0x7f00_0001).bigEndian
        _ = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(probe, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(probe, $0, &len) } }
        let port = Int(UInt16(bigEndian: addr.sin_port))
        close(probe)
        let box = try strict.sandbox(["fixed_port": port])
        let r = try box.signin("login", "--port", String(port))
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("127.0.0.1%3A\(port)%2Fcallback"))
    }

    @Test func ctrlCCancelsAndFreesThePort() throws {
        let strict = try Shared.strict.get()
        let box = try Sandbox(issuer: strict.issuer)
        let run = try LiveRun(box, ["login", "--no-browser"])
        let port = try #require(run.waitFor(#"redirect_uri=http%3A%2F%2F127\.0\.0\.1%3A(\d+)"#))
        #expect(run.waitFor("Waiting for the sign-in") != nil)
        kill(run.process.processIdentifier, SIGINT)
        let r = run.finish()
        #expect(r.status == 4, "\(r.stderr)")
        #expect(r.stderr.contains("canceled"))
        let c = try Subprocess.run("/usr/bin/curl", ["-sS", "--max-time", "5", "http://127.0.0.1:\(port)/callback"])
        #expect(c.status == 7)  // connection refused: the listener is gone
    }

    func deviceLogin(_ box: Sandbox) throws -> (LiveRun, String) {
        let run = try LiveRun(box, ["login", "--device"])
        let code = try #require(run.waitFor(#"enter the code:\s+(\d{4}-\d{4})"#))
        return (run, code)
    }

    @Test func deviceFlowSignsIn() throws {
        let strict = try Shared.strict.get()
        let box = try Sandbox(issuer: strict.issuer)
        let (run, code) = try deviceLogin(box)
        #expect(run.stderrText.contains("\(strict.issuer)/device/verify"))
        #expect(run.waitFor("Waiting up to") != nil)
        try strict.approveDevice(userCode: code)
        let r = run.finish()
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == "Signed in as Alice Example <alice@example.org>\n")
        #expect(try box.signin("whoami").stdout.contains("alice@example.org"))
    }

    @Test func deviceFlowHonoursSlowDown() throws {
        let strict = try Shared.strict.get()
        let box = try strict.sandbox(["device_slow_down": 1])
        let (run, code) = try deviceLogin(box)
        try strict.approveDevice(userCode: code)
        let r = run.finish()
        #expect(r.status == 0, "\(r.stderr)")
        // One slow_down answer, then the interval grew by 5 s and the next poll succeeded: exactly two polls.
        #expect(try strict.stats(box.clientID)["device_polls"] as? Int == 2)
    }

    @Test func deviceFlowExpiryAndDenial() throws {
        let strict = try Shared.strict.get()
        let expiring = try Sandbox(issuer: strict.issuer)
        try strict.control(expiring.clientID, ["device_expires_in": 2])
        let (run1, _) = try deviceLogin(expiring)
        let r1 = run1.finish()
        #expect(r1.status == 6, "\(r1.stderr)")
        let denied = try Sandbox(issuer: strict.issuer)
        let (run2, code) = try deviceLogin(denied)
        try strict.approveDevice(userCode: code, deny: true)
        let r2 = run2.finish()
        #expect(r2.status == 4, "\(r2.stderr)")
        #expect(denied.entryFile() == nil)
    }

    @Test func deviceFlowScopesRefusedAreExplained() throws {
        let strict = try Shared.strict.get()
        let box = try Sandbox(issuer: strict.issuer, extra: ["scopes": ["openid", "restricted.scope"]])
        let r = try box.signin("login", "--device")
        #expect(r.status == 5)
        #expect(r.stderr.contains("not allowed on the device flow"))
    }

    @Test func theWaysToSignInWithoutABrowserStartWithAWayNotAnAlternative() throws {
        let strict = try Shared.strict.get()
        let box = try strict.sandbox()
        let info = #"{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","spec":{"interactive":true}}"#
        var env = box.environment.filter { $0.key != "BROWSER" }
        env["KUBERNETES_EXEC_INFO"] = info
        env["SSH_CONNECTION"] = "10.0.0.2 5555 10.0.0.1 22"
        let r = try Subprocess.run("/usr/bin/timeout", ["3", Paths.signin, "kubectl-credential"], env: env)
        let ways = r.stderr.components(separatedBy: "Any of these works:\n").dropFirst().first ?? ""
        #expect(ways.hasPrefix("  - Tunnel the port"), "\(r.stderr)")
        #expect(r.stderr.contains("Received the answer from the browser") == false)
    }
}
