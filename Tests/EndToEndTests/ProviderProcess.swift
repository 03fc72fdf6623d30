import Foundation
import Synchronization
import SignInKit
import SignInTransport
import Testing

/// A provider on loopback, in its own process, on a port the OS chose. It exits when we close its stdin.
final class Provider: @unchecked Sendable {
    let process = Process()
    private let stdin = Pipe()
    let port: Int
    var issuer: String { "http://127.0.0.1:\(port)" }
    /// The words of the provider's `READY` line after the port (a control port of its own, for example).
    let readyWords: [String]

    init(script: String, arguments: [String] = [], environment: [String: String] = [:]) throws {
        guard FileManager.default.isExecutableFile(atPath: Paths.python) else {
            throw HarnessError(description: "no test Python at \(Paths.python): run .ci/run (or python3 -m venv .venv && .venv/bin/pip install -r Tests/Providers/requirements.txt)")
        }
        let out = Pipe()
        process.executableURL = URL(fileURLWithPath: Paths.python)
        process.arguments = [Paths.providers.appendingPathComponent(script).path] + arguments
        var env = ProcessInfo.processInfo.environment
        env.merge(environment) { $1 }
        process.environment = env
        process.standardInput = stdin
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Read up to the newline: the line may arrive in pieces.
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        let text = String(decoding: line, as: UTF8.self)
        guard text.hasPrefix("READY "), let p = Int(text.dropFirst(6).prefix { $0.isNumber }) else {
            process.terminate()
            throw HarnessError(description: "\(script) did not start: \(text)")
        }
        port = p
        readyWords = text.split(whereSeparator: { $0 == " " || $0 == "\n" }).dropFirst(2).map(String.init)
    }

    func stop() {
        try? stdin.fileHandleForWriting.close()
        process.terminate()
        process.waitUntilExit()
    }

    deinit { if process.isRunning { stop() } }

    /// This provider, ended as the test process exits (`Leftovers.endAtExit`).
    func endingWithTheTestProcess() -> Provider {
        Leftovers.endAtExit(process.processIdentifier)
        return self
    }

    /// This provider, told to end as the test process exits (its standard input closed) and waited for: one that runs
    /// a server of its own (glewlwyd) stops it and removes its folder first, which a SIGKILL would leave behind.
    func finishingWithTheTestProcess() -> Provider {
        Leftovers.finishAtExit(self)
        return self
    }

    /// Closes its standard input and waits (five seconds at most) for it to end by itself; then ends it.
    func finish() {
        try? stdin.fileHandleForWriting.close()
        let pid = process.processIdentifier
        if !waitFor(seconds: 5, { !self.process.isRunning }) { Leftovers.end(pid, group: false) }
    }

    // Strict provider controls (per client ID, so tests can run at once).
    func control(_ clientID: String, _ settings: [String: Any]) throws {
        _ = try http("POST", "/_control/\(clientID)", body: JSONSerialization.data(withJSONObject: settings))
    }

    func stats(_ clientID: String) throws -> [String: Any] {
        let data = try http("GET", "/_stats/\(clientID)")
        return (try JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:]
    }

    func approveDevice(userCode: String, deny: Bool = false) throws {
        _ = try http("POST", "/device/approve", body: Data("user_code=\(userCode)\(deny ? "&action=deny" : "")".utf8))
    }

    /// A tiny HTTP/1.1 client over a socket, so tests need no URLSession.
    func http(_ method: String, _ path: String, body: Data = Data()) throws -> Data {
        let r = try Subprocess.run("/usr/bin/curl", ["-sS", "--max-time", "10", "-X", method, "--data-binary", "@-", "http://127.0.0.1:\(port)\(path)"], stdin: body)
        guard r.status == 0 else { throw HarnessError(description: "curl \(path) failed: \(r.stderr)") }
        return Data(r.stdout.utf8)
    }
}

/// Providers shared by the tests: started once, on first use, and ended as the test process exits.
enum Shared {
    static let mock = Result { try Provider(script: "mock_provider.py").endingWithTheTestProcess() }
    static let strict = Result { try Provider(script: "strict_provider.py").endingWithTheTestProcess() }
}

/// Ends the processes a test leaves running on purpose, and sees them gone, so none outlives the run (CI's
/// `.ci/leftovers` counts a process still there after the run as left behind).
enum Leftovers {
    private static let atExit = Mutex<[pid_t]>([])
    private static let finishing = Mutex<[Provider]>([])

    /// Finishes `provider` (`Provider.finish`) as this process exits.
    static func finishAtExit(_ provider: Provider) {
        finishing.withLock { list in
            if list.isEmpty { atexit { Leftovers.finishing.withLock { $0 }.forEach { $0.finish() } } }
            list.append(provider)
        }
    }

    /// Ends `pid` as this process exits. A shared provider also exits when its standard input closes, which happens
    /// only once this process is gone: too late for a check that starts the moment it is.
    static func endAtExit(_ pid: pid_t) {
        atExit.withLock { pids in
            if pids.isEmpty { atexit { Leftovers.atExit.withLock { $0 }.forEach { Leftovers.end($0, group: false) } } }
            pids.append(pid)
        }
    }

    /// Sends SIGKILL to `pid` (and to the process group it leads, with `group`), then waits until it is gone or a
    /// zombie, for five seconds at most.
    static func end(_ pid: pid_t, group: Bool) {
        if group { kill(-pid, SIGKILL) }
        kill(pid, SIGKILL)
        _ = waitFor(seconds: 5) {
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return true }
            return (stat.split(separator: ")").last?.dropFirst().first ?? "Z") == "Z"
        }
    }

    /// The environment `pid` started with, as `NAME=value` entries (none when it is gone or a zombie).
    static func environment(of pid: pid_t) -> [String] {
        guard let data = FileHandle(forReadingAtPath: "/proc/\(pid)/environ")?.readDataToEndOfFile() else { return [] }
        return data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
    }
}
