import Foundation
import Testing

/// Google's own tools on signin's grant: gcloud, google-auth and Go's ADC through the metadata server of
/// `signin exec --gce-metadata` and `signin metadata-server`, impersonation through an IAM Credentials stand-in,
/// and the docker credential helper with skopeo against Debian's registry.
enum GoogleShape {
    static let cloudPlatform = "https://www.googleapis.com/auth/cloud-platform"
    static let serviceAccount = "deployer@test-project.iam.gserviceaccount.com"

    /// A signed-in user of the strict provider configured as a Google user would be: the cloud-platform scope, a
    /// project, and Google's APIs pointed at the provider's stand-ins.
    static func sandbox(_ strict: Provider, settings: [String: Any] = [:], extra: [String: Any] = [:], removing: [String] = []) throws -> Sandbox {
        var config: [String: Any] = ["scopes": ["openid", "email", "profile", cloudPlatform], "project_id": "test-project", "project_number": "123456789",
                                     "iam_credentials_endpoint": strict.issuer, "resource_manager_endpoint": strict.issuer]
        config.merge(extra) { $1 }
        for key in removing { config.removeValue(forKey: key) }
        let box = try strict.signedInSandbox(settings, extra: config)
        box.environment["CLOUDSDK_CONFIG"] = box.root.appendingPathComponent("gcloud").path
        box.environment["CLOUDSDK_CORE_DISABLE_PROMPTS"] = "1"
        return box
    }

    static func requireTool(_ path: String, _ why: String) throws {
        try #require(FileManager.default.isExecutableFile(atPath: path), "\(path) missing: \(why)")
    }

    static let gcloud = "/usr/bin/gcloud"

    /// google-auth's Application Default Credentials, as a Python program would use them.
    static let googleAuthScript = Paths.providers.appendingPathComponent("google_auth_default.py").path

    /// The Go program of Tests/Providers/go, built once from Debian's packages (no network, no modules).
    static let goProgram: Result<String, Error> = Result {
        let out = Paths.repo.appendingPathComponent(".build/test-tools")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        let binary = out.appendingPathComponent("adctoken").path
        let r = try Subprocess.run("/usr/bin/env", ["GOPATH=\(Paths.providers.path)/go:/usr/share/gocode", "GO111MODULE=off", "GOFLAGS=",
                                                    "GOCACHE=\(out.path)/go-cache", "HOME=\(out.path)", "/usr/bin/go", "build", "-o", binary, "adctoken"])
        guard r.status == 0 else { throw HarnessError(description: "go build failed (golang-go, golang-golang-x-oauth2-google-dev, golang-google-cloud-compute-metadata-dev installed?): \(r.stderr)") }
        return binary
    }

    static func json(_ text: String) -> [String: Any] {
        let line = text.split(separator: "\n").last.map(String.init) ?? ""
        return (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]) ?? [:]
    }
}

/// A `signin` that runs until stopped (`metadata-server`), its standard output readable line by line.
final class RunningSignin: @unchecked Sendable {
    let process = Process()
    private let out = Pipe()
    private let errURL: URL
    private var buffer = Data()

    init(_ box: Sandbox, _ args: [String], env extra: [String: String] = [:]) throws {
        errURL = box.root.appendingPathComponent("running-\(UUID().uuidString).err")
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        process.executableURL = URL(fileURLWithPath: Paths.signin)
        process.arguments = args
        var env = box.environment
        env.merge(extra) { $1 }
        process.environment = env.filter { !$0.value.isEmpty }
        process.standardOutput = out
        process.standardError = try FileHandle(forWritingTo: errURL)
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    /// The next line of its standard output; nil once it closed.
    func readLine() -> String? {
        while true {
            if let nl = buffer.firstIndex(of: 10) {
                let line = String(decoding: buffer[buffer.startIndex..<nl], as: UTF8.self)
                buffer.removeSubrange(buffer.startIndex...nl)
                return line
            }
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { return nil }
            buffer.append(chunk)
        }
    }

    /// The lines of its standard output up to and with `marker` (all of them, to its end, when `marker` is nil).
    func lines(through marker: String? = nil) -> [String] {
        var lines: [String] = []
        while let line = readLine() {
            lines.append(line)
            if line == marker { break }
        }
        return lines
    }

    var stderr: String { (try? String(contentsOf: errURL, encoding: .utf8)) ?? "" }

    /// Sends `signal` and waits for the end: the exit status, or the signal that ended it.
    func stop(_ signal: Int32 = SIGTERM) -> (status: Int32, bySignal: Bool) {
        if process.isRunning { kill(process.processIdentifier, signal) }
        process.waitUntilExit()
        return (process.terminationStatus, process.terminationReason == .uncaughtSignal)
    }

    deinit { if process.isRunning { kill(process.processIdentifier, SIGKILL); process.waitUntilExit() } }
}

/// curl against a metadata server; returns (curl's exit, HTTP status, headers, body).
func metadataRequest(_ port: Int, _ path: String, headers: [String] = ["Metadata-Flavor: Google"], method: String = "GET", asUID: Int? = nil) throws -> (exit: Int32, status: Int, headers: String, body: String) {
    var args = ["-sS", "--max-time", "10", "-X", method, "-D", "-"]
    for h in headers { args += ["-H", h] }
    args.append("http://127.0.0.1:\(port)\(path)")
    let r = asUID.map { uid in try? Subprocess.run("/usr/bin/setpriv", ["--reuid=\(uid)", "--regid=\(uid)", "--clear-groups", "/usr/bin/curl"] + args) } ?? (try? Subprocess.run("/usr/bin/curl", args))
    guard let r else { throw HarnessError(description: "curl did not run") }
    let parts = r.stdout.components(separatedBy: "\r\n\r\n")
    let head = parts.first ?? ""
    let status = Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0
    return (r.status, status, head, parts.dropFirst().joined(separator: "\r\n\r\n"))
}

@Suite struct GoogleToolsTests {
    @Test func gcloudPrintsSigninsTokenAndListsTheAccountAndProject() throws {
        try GoogleShape.requireTool(GoogleShape.gcloud, "gcloud comes with the image")
        let strict = try Shared.strict.get()
        let box = try GoogleShape.sandbox(strict)
        let token = try box.signin("token").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let printed = try box.signin("exec", "--gce-metadata", "--", GoogleShape.gcloud, "auth", "print-access-token")
        #expect(printed.status == 0, "\(printed.stderr)")
        #expect(printed.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == token)
        let list = try box.signin("exec", "--gce-metadata", "--", GoogleShape.gcloud, "auth", "list", "--format=value(account)")
        #expect(list.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "alice@example.org", "\(list.stderr)")
        let project = try box.signin("exec", "--gce-metadata", "--", GoogleShape.gcloud, "config", "get-value", "project")
        #expect(project.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "test-project", "\(project.stderr)")
        // Served from the store: the token was fresh, so no refresh went to the provider.
        #expect(try strict.stats(box.clientID)["refreshes"] as? Int == 0)
        // gcloud keeps access tokens it was given (its access_tokens.db, its logs), never a grant: no file in its
        // folder holds a refresh token (the strict provider's are "rt-" and 32 characters).
        let folder = box.environment["CLOUDSDK_CONFIG"]!
        let files = FileManager.default.enumerator(atPath: folder)?.allObjects as? [String] ?? []
        #expect(files.contains("access_tokens.db"), "\(files)")
        for f in files {
            let text = String(decoding: FileManager.default.contents(atPath: folder + "/" + f) ?? Data(), as: UTF8.self)
            // A whole token, not the same letters inside a JWT's signature.
            #expect(text.firstMatch(of: /(^|[^A-Za-z0-9_-])rt-[A-Za-z0-9_-]{32}([^A-Za-z0-9_-]|$)/) == nil, "\(f) holds a refresh token")
        }
    }

    /// A program using Application Default Credentials under `exec --gce-metadata` gets the person's token,
    /// the configured project and the account's e-mail.
    static func expectsThePersonsCredentials(_ program: [String]) throws {
        let strict = try Shared.strict.get()
        let box = try GoogleShape.sandbox(strict)
        let token = try box.signin("token").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let r = try box.signin(["exec", "--gce-metadata", "--"] + program)
        #expect(r.status == 0, "\(r.stderr)")
        let o = GoogleShape.json(r.stdout)
        #expect(o["token"] as? String == token)
        #expect(o["project"] as? String == "test-project")
        #expect(o["email"] as? String == "alice@example.org")
    }

    @Test func googleAuthDefaultReturnsTheTokenAndTheProject() throws {
        try Self.expectsThePersonsCredentials([Paths.python, GoogleShape.googleAuthScript])
    }

    @Test func goFindDefaultCredentialsGetsTheToken() throws {
        try Self.expectsThePersonsCredentials([try GoogleShape.goProgram.get()])
    }

    @Test func theProjectNumberIsLookedUpOnceWhenOnlyTheIDIsGiven() throws {
        let strict = try Shared.strict.get()
        let box = try GoogleShape.sandbox(strict, settings: ["project_number": "987654321"], removing: ["project_number"])
        let script = """
            for i in 1 2 3; do curl -sf -H 'Metadata-Flavor: Google' "http://$GCE_METADATA_HOST/computeMetadata/v1/project/numeric-project-id"; echo; done
            """
        let r = try box.signin("exec", "--gce-metadata", "--", "/bin/sh", "-c", script)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == "987654321\n987654321\n987654321\n")
        #expect(try strict.stats(box.clientID)["rm_calls"] as? Int == 1)
        // Without any project the server says it has none (404), and gcloud's users are told what to add.
        let none = try GoogleShape.sandbox(strict, removing: ["project_number", "project_id"])
        let probe = try none.signin("exec", "--gce-metadata", "--", "/bin/sh", "-c",
                                    "curl -s -o /dev/null -w '%{http_code}' -H 'Metadata-Flavor: Google' \"http://$GCE_METADATA_HOST/computeMetadata/v1/project/numeric-project-id\"")
        #expect(probe.stdout == "404")
        let gcloudNote = try none.signin("exec", "--gce-metadata", "--", "/bin/true")
        #expect(!gcloudNote.stderr.contains("project_id"))
        let named = try none.signin("exec", "--gce-metadata", "--", "gcloud", "--version")
        #expect(named.stderr.contains("add \"project_id\" to \(none.configPath)"), "\(named.stderr)")
    }

    @Test func aScopeTheGrantLacksIsAClearErrorWithWhatToRun() throws {
        let strict = try Shared.strict.get()
        let box = try GoogleShape.sandbox(strict, extra: ["scopes": ["openid", "email"]])
        let script = """
            curl -s -w ' %{http_code}' -H 'Metadata-Flavor: Google' "http://$GCE_METADATA_HOST/computeMetadata/v1/instance/service-accounts/default/token?scopes=\(GoogleShape.cloudPlatform)"
            """
        let r = try box.signin("exec", "--gce-metadata", "--", "/bin/sh", "-c", script)
        #expect(r.stdout.hasSuffix(" 400"), "\(r.stdout)")
        #expect(r.stdout.contains("\"error\":\"invalid_scope\""))
        #expect(r.stderr.contains("\(GoogleShape.cloudPlatform), which the sign-in of alice@example.org was not granted: add it to \"scopes\" in \(box.configPath) and run `signin login`"), "\(r.stderr)")
        // Scopes it has are served (Google's long names for email count as email).
        let ok = try box.signin("exec", "--gce-metadata", "--", "/bin/sh", "-c",
                                "curl -s -o /dev/null -w '%{http_code}' -H 'Metadata-Flavor: Google' \"http://$GCE_METADATA_HOST/computeMetadata/v1/instance/service-accounts/default/token?scopes=https://www.googleapis.com/auth/userinfo.email\"")
        #expect(ok.stdout == "200")
    }

    @Test func execPassesStatusSignalsAndNoTokenAndClosesTheServer() throws {
        let strict = try Shared.strict.get()
        let box = try GoogleShape.sandbox(strict)
        let token = try box.signin("token").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let env = try box.signin("exec", "--gce-metadata", "--", "/bin/sh", "-c", "env; echo \"$@\"; exit 7", "sh", "a b")
        #expect(env.status == 7)
        #expect(!env.stdout.contains(token) && !env.stdout.contains("SIGNIN_ACCESS_TOKEN"))
        #expect(env.stdout.contains("GCE_METADATA_HOST=127.0.0.1:") && env.stdout.contains("GCE_METADATA_ROOT=127.0.0.1:") && env.stdout.contains("GCE_METADATA_IP=127.0.0.1:"))
        // A signal sent to signin reaches the command, whose status signin then exits with; the server is gone after.
        let run = try RunningSignin(box, ["exec", "--gce-metadata", "--", "/bin/sh", "-c", "trap 'exit 42' TERM; echo $GCE_METADATA_HOST; while :; do sleep 0.05; done"])
        let host = try #require(run.readLine())
        let port = try #require(Int(host.split(separator: ":").last ?? ""))
        #expect(try metadataRequest(port, "/").status == 200)
        let ended = run.stop(SIGTERM)
        #expect(ended.status == 42 && !ended.bySignal, "\(run.stderr)")
        #expect(try metadataRequest(port, "/").exit == 7)  // connection refused: the server closed with the command
        // A command killed by a signal: signin ends by the same signal.
        let killed = try RunningSignin(box, ["exec", "--gce-metadata", "--", "/bin/sh", "-c", "echo up; kill -KILL $$"])
        _ = killed.readLine()
        let k = killed.stop(0)
        #expect(k.bySignal && k.status == SIGKILL)
        // Not signed in: exit 3 before the command runs.
        let marker = box.root.appendingPathComponent("ran").path
        #expect(try box.signin("logout").status == 0)
        let out = try box.signin("exec", "--gce-metadata", "--", "/usr/bin/touch", marker)
        #expect(out.status == 3)
        #expect(!FileManager.default.fileExists(atPath: marker))
    }

    @Test func whatTakesPrecedenceOverTheServerIsSaid() throws {
        let strict = try Shared.strict.get()
        let box = try GoogleShape.sandbox(strict)
        let gcloudConfig = box.environment["CLOUDSDK_CONFIG"]!
        try FileManager.default.createDirectory(atPath: gcloudConfig + "/configurations", withIntermediateDirectories: true)
        try Data("{}".utf8).write(to: URL(fileURLWithPath: gcloudConfig + "/application_default_credentials.json"))
        try Data("[core]\naccount = bob@example.org\n".utf8).write(to: URL(fileURLWithPath: gcloudConfig + "/configurations/config_default"))
        let r = try box.signin(["exec", "--gce-metadata", "--", "/bin/true"], env: ["GOOGLE_APPLICATION_CREDENTIALS": "/tmp/key.json"])
        #expect(r.status == 0)
        #expect(r.stderr.contains("GOOGLE_APPLICATION_CREDENTIALS is set"), "\(r.stderr)")
        #expect(r.stderr.contains("application_default_credentials.json exists") && r.stderr.contains("gcloud auth application-default revoke"))
        #expect(r.stderr.contains("gcloud has its own account set (bob@example.org)"))
    }

    @Test func gcloudWorksAsSoonAsTheProjectIsNamed() throws {
        try GoogleShape.requireTool(GoogleShape.gcloud, "gcloud comes with the image")
        let strict = try Shared.strict.get()
        let box = try GoogleShape.sandbox(strict, removing: ["project_id", "project_number"])
        let token = try box.signin("token").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let first = try box.signin("exec", "--gce-metadata", "--", GoogleShape.gcloud, "auth", "print-access-token")
        #expect(first.status != 0 && first.stderr.contains("add \"project_id\""), "\(first.stderr)")
        var config = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: box.configPath))) as! [String: Any]
        config["project_id"] = "test-project"
        config["project_number"] = "123456789"
        try box.writeConfig(config)
        let second = try box.signin("exec", "--gce-metadata", "--", GoogleShape.gcloud, "auth", "print-access-token")
        #expect(second.status == 0 && second.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == token, "\(second.stderr)")
        // A "False" gcloud wrote before (another run, another tool): said, and asked again.
        let cache = box.environment["CLOUDSDK_CONFIG"]! + "/gce"
        try Data("False".utf8).write(to: URL(fileURLWithPath: cache))
        let third = try box.signin("exec", "--gce-metadata", "--", GoogleShape.gcloud, "auth", "print-access-token")
        #expect(third.status == 0 && third.stderr.contains("gcloud had cached"), "\(third.stderr)")
    }

    @Test func anUnreachableResourceManagerSaysToSetTheProjectNumber() throws {
        let strict = try Shared.strict.get()
        let box = try GoogleShape.sandbox(strict, extra: ["resource_manager_endpoint": "http://127.0.0.1:9"], removing: ["project_number"])
        let server = try RunningSignin(box, ["metadata-server", "--json"])
        let line = try #require(server.readLine())
        let port = try #require(GoogleShape.json(line)["port"] as? Int)
        let r = try metadataRequest(port, "/computeMetadata/v1/project/numeric-project-id")
        #expect(r.status == 502 && r.body.contains("set \\\"project_number\\\""), "\(r)")
        _ = server.stop(SIGTERM)
        #expect(server.stderr.contains("project_number"), "\(server.stderr)")
    }
}
