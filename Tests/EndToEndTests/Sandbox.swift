import Foundation
import Synchronization
import SignInKit
import SignInTransport
import Testing

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
