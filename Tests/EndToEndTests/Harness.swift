import Foundation
import Synchronization
import SignInKit
import SignInTransport
import Testing

/// Where things are: the repository, the built `signin`, the Python with the test providers.
enum Paths {
    static let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let providers = repo.appendingPathComponent("Tests/Providers")

    /// `$SIGNIN_TEST_BINARY` (CI runs the suite again against `scripts/build-release`'s binary), else the `signin`
    /// built beside this test bundle.
    static var signin: String {
        if let p = ProcessInfo.processInfo.environment["SIGNIN_TEST_BINARY"], !p.isEmpty { return p }
        return built("signin")
    }

    /// A product built beside this test bundle (`signin`, `signin-hello`).
    static func built(_ name: String) -> String {
        var dir = Bundle.main.bundleURL.deletingLastPathComponent()
        if Bundle.main.bundleURL.pathExtension != "xctest" { dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent() }
        let candidate = dir.appendingPathComponent(name).path
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        return repo.appendingPathComponent(".build/debug/" + name).path
    }

    /// `$SIGNIN_TEST_PYTHON`, else the venv `.ci/run` creates at `.venv`.
    static var python: String {
        if let p = ProcessInfo.processInfo.environment["SIGNIN_TEST_PYTHON"], !p.isEmpty { return p }
        return repo.appendingPathComponent(".venv/bin/python").path
    }
}

struct HarnessError: Error, CustomStringConvertible {
    let description: String
}

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

struct RunResult {
    let status: Int32
    let stdout: String
    let stderr: String
}

/// The HTTP status curl gets for `args` (a URL and its options), as text ("200"); the body is dropped.
func httpStatus(_ args: [String]) throws -> String {
    try Subprocess.run("/usr/bin/curl", ["-sS", "--max-time", "10", "-o", "/dev/null", "-w", "%{http_code}"] + args).stdout
}

enum Subprocess {
    /// Runs a program to completion with output in temporary files (no pipe can fill up and deadlock).
    static func run(_ exe: String, _ args: [String], env: [String: String]? = nil, stdin: Data? = nil) throws -> RunResult {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("signin-run-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let outURL = dir.appendingPathComponent("out"), errURL = dir.appendingPathComponent("err")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: exe)
        p.arguments = args
        if let env { p.environment = env }
        let outH = try FileHandle(forWritingTo: outURL), errH = try FileHandle(forWritingTo: errURL)
        p.standardOutput = outH
        p.standardError = errH
        // Standard input from a file, not a pipe: a program that exits without reading all of it (a fast release
        // build can) must not kill this test process with SIGPIPE.
        var inH: FileHandle?
        if let stdin {
            let inURL = dir.appendingPathComponent("in")
            try stdin.write(to: inURL)
            inH = try FileHandle(forReadingFrom: inURL)
        }
        p.standardInput = inH ?? FileHandle.nullDevice
        try p.run()
        p.waitUntilExit()
        try? inH?.close()
        try? outH.close()
        try? errH.close()
        return RunResult(status: p.terminationStatus, stdout: (try? String(contentsOf: outURL, encoding: .utf8)) ?? "",
                         stderr: (try? String(contentsOf: errURL, encoding: .utf8)) ?? "")
    }
}

/// One user's machine: a private HOME, config and store, and a browser stand-in.
final class Sandbox: @unchecked Sendable {
    let root: URL
    let clientID: String
    let issuer: String
    var environment: [String: String]
    var configPath: String { root.appendingPathComponent("config.json").path }
    var storeDir: String { root.appendingPathComponent("data/signin").path }
    var standinLog: String { root.appendingPathComponent("standin.log").path }
    /// Folders of this sandbox outside `root`, removed with it.
    var extraFolders: [String] = []

    /// A folder (0700) with a short path right under the temporary folder: a Unix socket's path must fit in 107
    /// bytes, which a socket deep in `root` under CI's temporary folder does not.
    func shortFolder() throws -> String {
        let path = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("s-" + UUID().uuidString.prefix(8).lowercased()).path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        extraFolders.append(path)
        return path
    }

    init(issuer: String, clientID: String = "client-\(UUID().uuidString.prefix(8))", secret: String? = nil, extra: [String: Any] = [:]) throws {
        root = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("signin-e2e-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        self.clientID = clientID
        self.issuer = issuer
        environment = [
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "HOME": root.path,
            "XDG_DATA_HOME": root.appendingPathComponent("data").path,
            "XDG_CONFIG_HOME": root.appendingPathComponent("config").path,
            "BROWSER": "\(Paths.python) \(Paths.providers.appendingPathComponent("browser_standin.py").path)",
            "STANDIN_LOG": root.appendingPathComponent("standin.log").path,
            "STANDIN_PIDS": root.appendingPathComponent("standin.pids").path,
            "STANDIN_MODE": "allow",
            "SIGNIN_CONFIG": root.appendingPathComponent("config.json").path,
        ]
        // CI's AddressSanitizer pass turns LeakSanitizer off (`ASAN_OPTIONS`); the signin the tests run is instrumented
        // too, and a thread still ending as it exits reads as a leak there: the same options for it.
        if let options = ProcessInfo.processInfo.environment["ASAN_OPTIONS"] { environment["ASAN_OPTIONS"] = options }
        var config: [String: Any] = ["client_id": clientID, "issuer": issuer]
        if let secret { config["client_secret"] = secret }
        config.merge(extra) { $1 }
        try writeConfig(config)
    }

    func writeConfig(_ config: [String: Any]) throws {
        try JSONSerialization.data(withJSONObject: config).write(to: URL(fileURLWithPath: configPath))
    }

    /// The configuration file changed by `change`.
    func editConfig(_ change: (inout [String: Any]) -> Void) throws {
        var config = (try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: configPath))) as? [String: Any]) ?? [:]
        change(&config)
        try writeConfig(config)
    }

    deinit {
        // A key unlocked into the user's kernel keyring (passphrase, Secret Service) goes with the sandbox, and so do
        // the entries held decrypted there, of every store in it (other programs' `appName` stores too).
        if FileManager.default.fileExists(atPath: storeDir + "/key.json") { _ = try? signin("lock") }
        for case let file as String in FileManager.default.enumerator(atPath: root.path)?.allObjects ?? [] where file.hasSuffix(".cred") {
            CredentialStore(directory: root.appendingPathComponent(file).deletingLastPathComponent().path).lock()
        }
        // The default store's entries go even when its files went first (a test that mounted a small disk over the
        // data folder unmounts it before the sandbox ends): the kernel names them by the folder's path alone.
        CredentialStore(directory: storeDir).lock()
        // An agent (`signin ssh` starts one on demand) ends with the sandbox.
        if let run = environment["XDG_RUNTIME_DIR"], FileManager.default.fileExists(atPath: run + "/signin/agent.sock") { _ = try? signin("agent", "--stop") }
        // A browser stand-in works on after signin exits, as a browser does; it ends with the sandbox, rather than
        // wait out a timeout of its own after the test (a stand-in that reached a stopped listener or provider).
        endStandIns()
        // A browser other than the stand-ins may still append to its log in `root`: a line written between the
        // removal of the files and of the folder leaves the folder behind. Remove until it is gone (once the folder
        // is gone, the next write fails instead of making it again).
        for _ in 0..<20 where FileManager.default.fileExists(atPath: root.path) {
            try? FileManager.default.removeItem(at: root)
        }
        for folder in extraFolders { try? FileManager.default.removeItem(atPath: folder) }
    }

    /// Ends every browser stand-in this sandbox's sign-ins started (each leads a session of its own, which may hold
    /// a Chromium), and sees them gone. A number in the list that now belongs to another process is left alone.
    func endStandIns() {
        let list = root.appendingPathComponent("standin.pids").path
        guard let text = try? String(contentsOfFile: list, encoding: .utf8) else { return }
        for pid in text.split(separator: "\n").compactMap({ pid_t($0) }) where Leftovers.environment(of: pid).contains("STANDIN_PIDS=" + list) {
            Leftovers.end(pid, group: true)
        }
    }

    func signin(_ args: String..., env extra: [String: String] = [:], stdin: Data? = nil) throws -> RunResult {
        try signin(args, env: extra, stdin: stdin)
    }

    func signin(_ args: [String], env extra: [String: String] = [:], stdin: Data? = nil) throws -> RunResult {
        var env = environment
        env.merge(extra) { $1 }
        // An empty value in `extra` removes the variable (BROWSER, DISPLAY, ...).
        return try Subprocess.run(Paths.signin, args, env: env.filter { !$0.value.isEmpty }, stdin: stdin)
    }

    /// What the browser stand-in saw, one JSON object per step.
    func standinSteps() -> [[String: Any]] {
        guard let text = try? String(contentsOfFile: standinLog, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    /// Waits (up to `seconds`) until the browser has reported `count` steps; a browser works on after signin exits.
    func waitForStandinSteps(_ count: Int, seconds: Double = 60) -> [[String: Any]] {
        let deadline = Date().addingTimeInterval(seconds)
        var steps = standinSteps()
        while steps.count < count && Date() < deadline {
            // Condition polling on a file another process appends to; there is no event to wait on.
            usleep(20_000)
            steps = standinSteps()
        }
        return steps
    }

    /// The browser's last step ("final", or "error"), waiting for it: the browser reports after reading the
    /// result page, which may be after signin has exited.
    func finalStandinStep(seconds: Double = 30) -> [String: Any]? {
        var last: [String: Any]?
        _ = waitFor(seconds: seconds) {
            last = standinSteps().last { ["final", "error"].contains($0["step"] as? String ?? "") }
            return last != nil
        }
        return last
    }

    /// Every byte of every file in the store folder (to prove nothing changed, or no plaintext is in it).
    func storeSnapshot() -> [String: Data] {
        var out: [String: Data] = [:]
        for name in (try? FileManager.default.contentsOfDirectory(atPath: storeDir)) ?? [] where !name.hasSuffix(".lock") {
            out[name] = FileManager.default.contents(atPath: storeDir + "/" + name)
        }
        return out
    }

    func entryFile() -> String? {
        ((try? FileManager.default.contentsOfDirectory(atPath: storeDir)) ?? []).first { $0.hasSuffix(".cred") }.map { storeDir + "/" + $0 }
    }
}

extension Data {
    func contains(_ s: String) -> Bool { range(of: Data(s.utf8)) != nil }
}

extension Provider {
    /// A user's machine with a fresh client of this provider, `settings` applied to that client (strict provider).
    func sandbox(_ settings: [String: Any] = [:], extra: [String: Any] = [:], secret: String? = nil) throws -> Sandbox {
        let box = try Sandbox(issuer: issuer, secret: secret, extra: extra)
        if !settings.isEmpty { try control(box.clientID, settings) }
        return box
    }

    /// The same, after a `signin login` that must succeed.
    func signedInSandbox(_ settings: [String: Any] = [:], extra: [String: Any] = [:], secret: String? = nil) throws -> Sandbox {
        let box = try sandbox(settings, extra: extra, secret: secret)
        let r = try box.signin("login")
        try #require(r.status == 0, "\(r.stderr)")
        return box
    }
}

/// A `signin` started now and collected later, to run several at once.
final class ParallelRun: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private var result: Result<RunResult, Error> = .failure(HarnessError(description: "not run"))

    init(_ box: Sandbox, _ args: [String], env: [String: String] = [:], stdin: Data? = nil) throws {
        DispatchQueue.global().async {
            self.result = Result { try box.signin(args, env: env, stdin: stdin) }
            self.done.signal()
        }
    }

    func wait() throws -> RunResult {
        done.wait()
        return try result.get()
    }
}

/// Polls `condition` (another process's state, which has no event to wait on) until it holds or `seconds` pass.
func waitFor(seconds: Double = 20, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if condition() { return true }
        usleep(10_000)
    }
    return condition()
}

/// `waitFor` for async tests: polls without blocking a thread of the cooperative pool (blocking one could starve
/// the very task being waited for).
func eventually(seconds: Double = 20, _ condition: () -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return condition()
}

/// Lets a test wait until an event handler has fired.
final class Waiter: @unchecked Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    func signal() { semaphore.signal() }
    func wait() async {
        await withCheckedContinuation { (k: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                self.semaphore.wait()
                k.resume()
            }
        }
    }
}

/// A TCP server on loopback that accepts nothing and answers nothing: a provider that never answers. Not
/// listening (`listening: false`), its port is held but refuses every connection: a provider that is down.
final class SilentServer: @unchecked Sendable {
    let fd: Int32
    let port: Int
    var url: String { "http://127.0.0.1:\(port)" }

    /// Bound to 127.0.0.1 (listening unless told not to), or with `ipv6Only` to [::1] alone (someone else's listener
    /// where a browser sent to `localhost` may go first), at a port the system chose.
    init(listening: Bool = true, ipv6Only: Bool = false) throws {
        let fd = socket(ipv6Only ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.fd = fd
        var len = socklen_t(ipv6Only ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size)
        var storage = sockaddr_storage()
        if ipv6Only {
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &one, socklen_t(MemoryLayout<Int32>.size))
            withUnsafeMutablePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                $0.pointee.sin6_family = sa_family_t(AF_INET6)
                $0.pointee.sin6_addr = in6addr_loopback
            } }
        } else {
            withUnsafeMutablePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                $0.pointee.sin_family = sa_family_t(AF_INET)
                $0.pointee.sin_addr.s_addr = in_addr_t(0x7f00_0001).bigEndian
            } }
        }
        let ok = withUnsafeMutablePointer(to: &storage) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) == 0 && (!listening || listen(fd, 8) == 0) && getsockname(fd, $0, &len) == 0 }
        }
        guard ok else { throw HarnessError(description: "silent server: \(errno)") }
        // The port is at the same offset in both address structures.
        port = Int(UInt16(bigEndian: withUnsafePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_port } }))
    }

    /// A connection waits in the backlog (the listening socket is readable).
    var hasPendingConnection: Bool {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&p, 1, 0) == 1
    }

    deinit { close(fd) }
}

/// A loopback port free a moment ago, for a provider that must be told the redirect address before signin listens
/// there (glewlwyd and idpyoidc register the exact `redirect_uri`): signin's own listener binds port 0 (on 127.0.0.1
/// and [::1], as a sign-in's does) and is closed at once for `redirect_port` to take.
func freeLoopbackPort() throws -> Int {
    let listener = try LoopbackServer(port: 0)
    defer { listener.close() }
    return listener.port
}
