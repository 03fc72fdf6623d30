import Foundation
import Testing
import SignInKit
import SignInKitURLSession
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The fourth review's attacks, each against the real binary (or the library), each failing on the code
/// it was found in: a forwarded session reaching other configurations, the bearer token following a redirect, an
/// agent folder another user made, a session outliving a SIGKILLed `signin ssh`, impersonation dropped through the
/// agent, a frozen or flooded agent, IAM tokens with control characters, a destination read as an option.
@Suite struct ForwardedAgentAttackTests {
    /// A laptop signed in as alice (GoogleShape's configuration: IAM stand-in, `sa` may be impersonated), with a
    /// runtime folder and a state folder of its own.
    static func laptop(_ strict: Provider) throws -> Sandbox {
        let box = try GoogleShape.sandbox(strict, settings: ["sa_allowed": [GoogleShape.serviceAccount]], extra: ["docker_registries": ["registry.example"]])
        box.environment["XDG_RUNTIME_DIR"] = try box.shortFolder()
        box.environment["XDG_STATE_HOME"] = box.root.appendingPathComponent("state").path
        return box
    }

    static func lines(_ s: String) -> [String] { s.split(separator: "\n").map(String.init) }

    // Part 1: a session forwarded for one configuration answers for that one only, and a configuration is a name.
    @Test func aForwardedSessionServesOnlyItsOwnConfigurationAndAProfileIsAName() throws {
        let strict = try Shared.strict.get()
        let box = try Self.laptop(strict)
        // A second configuration on the laptop, signed in too.
        let folder = box.environment["XDG_CONFIG_HOME"]! + "/signin"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try Data(contentsOf: URL(fileURLWithPath: box.configPath)).write(to: URL(fileURLWithPath: folder + "/other.json"))
        #expect(try box.signin(["login", "--profile", "other"], env: ["STANDIN_SUB": "bob"]).status == 0)
        let others = try box.signin("token", "--profile", "other").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let remote = try RemoteMachine(box)
        let script = """
            a() { curl -s -w '\\ncode=%{http_code}\\n' --unix-socket "$SIGNIN_AGENT_SOCK" "http://agent$1"; }
            a '/v1/token?kind=access&profile=other'
            a '/v1/token?kind=access&profile=../../config/signin/other'
            a '/v1/token?kind=pwn'
            m() { curl -s -w '\ncode=%{http_code}\n' -X "$1" --unix-socket "$SIGNIN_AGENT_SOCK" "http://agent$2"; }
            m POST /v1/lock; m POST /v1/stop; m POST '/v1/sessions?seconds=86400'; m GET /v1/sessions; m DELETE /v1/sessions/x
            signin token >/dev/null; echo "own=$?"
            """
        let r = try box.signin(["ssh"] + remote.sshArguments + [script])
        let out = Self.lines(r.stdout)
        #expect(!r.stdout.contains(others), "another configuration's token crossed")
        #expect(out.filter { $0.hasPrefix("code=") } == ["code=403", "code=400", "code=400"] + Array(repeating: "code=403", count: 5), "\(r.stdout) \(r.stderr)")
        // The agent's own requests (lock, stop, open, list or end sessions) are not served on a forwarded socket: the
        // remote machine can neither end the laptop's sessions nor open one of its own (the token after them still works).
        #expect(r.stdout.components(separatedBy: "is not served on a forwarded socket").count == 6, "\(r.stdout)")
        #expect(r.stdout.contains("configuration other is not forwarded"), "\(r.stdout)")
        #expect(r.stdout.contains("is not a configuration name"), "\(r.stdout)")
        #expect(out.contains("own=0"))
        // The agent's own socket (the one `signin ssh` started runs on) checks the name too: a path is never read.
        let socket = box.environment["XDG_RUNTIME_DIR"]! + "/signin/agent.sock"
        let traversal = try Subprocess.run("/usr/bin/curl", ["-s", "-w", "\ncode=%{http_code}", "--unix-socket", socket, "http://agent/v1/token?profile=..%2F..%2Fetc%2Fx"])
        #expect(traversal.stdout.hasSuffix("code=400"), "\(traversal.stdout)")
    }

    // Part 2: the bearer token goes only to the origin the caller named.
    @Test func performSendsTheTokenOnlyToTheOriginTheCallerNamed() async throws {
        let a = try Provider(script: "redirector.py")
        let b = try Provider(script: "redirector.py")
        let user = CountingUser()
        // Another port is another origin: followed, without the token.
        let away = URL(string: "\(a.issuer)/redirect?to=\(b.issuer)/echo")!
        let (awayBody, awayResponse) = try await user.perform(URLRequest(url: away))
        #expect(awayResponse.statusCode == 200 && String(decoding: awayBody, as: UTF8.self) == "none")
        // The same origin keeps it.
        let home = URL(string: "\(a.issuer)/redirect?to=\(a.issuer)/echo")!
        let (homeBody, _) = try await user.perform(URLRequest(url: home))
        #expect(String(decoding: homeBody, as: UTF8.self) == "Bearer token-\(user.issued.get() - 1)")
        // A 401 from another origin marks nothing, refreshes nothing and sends nothing again.
        let refusedAway = URL(string: "\(a.issuer)/redirect?to=\(b.issuer)/refuse")!
        let (_, refused) = try await user.perform(URLRequest(url: refusedAway))
        #expect(refused.statusCode == 401)
        #expect(user.marked.get() == 0, "a token was marked rejected on another origin's word")
        #expect(try String(decoding: b.http("GET", "/_count"), as: UTF8.self) == "1", "the request went there more than once")
        // The origin the caller named refusing the token still gets the one retry with a new token.
        let (_, again) = try await user.perform(URLRequest(url: URL(string: "\(b.issuer)/refuse")!))
        #expect(again.statusCode == 401 && user.marked.get() == 1)
        #expect(try String(decoding: b.http("GET", "/_count"), as: UTF8.self) == "3")
        a.stop()
        b.stop()
    }

    /// A user whose every fresh token is new, counting what the library marks rejected.
    struct CountingUser: SignInUserProtocol {
        let issued = SharedValue(0)
        let marked = SharedValue(0)
        var profile: SignInProfile { SignInProfile(userID: "u", name: nil, email: nil) }
        var grantedScopes: [String] { [] }
        func freshToken(minimumValidity: Duration) async throws(SignInError) -> SignInToken {
            let n = issued.get()
            issued.set(n + 1)
            return SignInToken(value: "token-\(n)", expirationDate: nil)
        }
        func userInfo() async throws(SignInError) -> [String: JSONValue] { [:] }
        func markAccessTokenRejected(_ token: String) throws(SignInError) { marked.set(marked.get() + 1) }
    }

    // Part 3: an agent folder or socket of another user is never trusted; an agent of another store is not reused; a
    // file where the socket goes is not removed.
    @Test func anAgentFolderOfAnotherUserOrAnotherStoreIsNeverTrusted() throws {
        let strict = try Shared.strict.get()
        let box = try Self.laptop(strict)
        let folder = box.environment["XDG_RUNTIME_DIR"]! + "/signin"
        // uid 65534 made the folder first (as it can with /tmp/signin-UID) and listens on agent.sock, answering
        // anything with success.
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        chmod(box.environment["XDG_RUNTIME_DIR"]!, 0o755)
        chown(folder, 65534, 65534)
        chmod(folder, 0o755)
        let fake = try FakeAgent(folder + "/agent.sock", store: AgentProtocol.store(environment: box.environment))
        let agent = try box.signin("agent")
        #expect(agent.status != 0 && agent.stderr.contains("another user"), "\(agent.stderr)")
        let remote = try RemoteMachine(box)
        let ssh = try box.signin(["ssh"] + remote.sshArguments + ["echo reached"])
        #expect(ssh.status != 0 && !ssh.stdout.contains("reached") && ssh.stderr.contains("cannot be trusted"), "\(ssh.stdout) \(ssh.stderr)")
        let lock = try box.signin("lock")
        #expect(!lock.stdout.contains("ended every session"), "\(lock.stdout)")
        // Named directly in SIGNIN_AGENT_SOCK, the socket is still refused: its listener is another user.
        let token = try box.signin(["token"], env: ["SIGNIN_AGENT_SOCK": folder + "/agent.sock"])
        #expect(token.status == 3 && token.stderr.contains("another user (uid 65534) listens on it"), "\(token.stderr)")
        #expect(fake.requests() == [], "a request reached the other user's socket: \(fake.requests())")
        fake.stop()

        // The same user, another HOME: the running agent serves another store and is not reused.
        try FileManager.default.removeItem(atPath: folder)
        let mine = try RunningSignin(box, ["agent"])
        _ = try #require(mine.readLine())
        let elsewhere = ["HOME": box.root.appendingPathComponent("elsewhere").path, "XDG_DATA_HOME": box.root.appendingPathComponent("elsewhere/data").path]
        let second = try box.signin(["agent"], env: elsewhere)
        #expect(second.status != 0 && second.stderr.contains("another store"), "\(second.stderr)")
        let sshElsewhere = try box.signin(["ssh"] + remote.sshArguments + ["echo reached"], env: elsewhere)
        #expect(!sshElsewhere.stdout.contains("reached") && sshElsewhere.stderr.contains("another store"), "\(sshElsewhere.stderr)")
        #expect(try box.signin("agent", "--stop").status == 0)
        _ = mine.stop(0)
        // A file that is not a socket where the agent's socket goes: refused by name, and left as it is.
        let planted = folder + "/agent.sock"
        try Data("not a socket".utf8).write(to: URL(fileURLWithPath: planted))
        let onFile = try box.signin("agent")
        #expect(onFile.status != 0 && onFile.stderr.contains("\(planted) exists and is not a socket of yours; remove it"), "\(onFile.stderr)")
        #expect(try String(contentsOfFile: planted, encoding: .utf8) == "not a socket")
    }

    // Part 5: a SIGKILLed `signin ssh` ends its session (the kernel says so through a pidfd).
    @Test func aSigkilledSigninSSHEndsItsSession() throws {
        let strict = try Shared.strict.get()
        let box = try Self.laptop(strict)
        let remote = try RemoteMachine(box)
        let marker = box.root.appendingPathComponent("go").path
        let script = """
            signin token >/dev/null; echo "before=$?"
            echo ready
            while [ ! -e \(marker) ]; do sleep 0.05; done
            signin token >/dev/null; echo "after=$?"
            """
        let run = try RunningSignin(box, ["ssh"] + remote.sshArguments + [script])
        var lines = run.lines(through: "ready")
        #expect(lines.contains("before=0"), "\(lines) \(run.stderr)")
        kill(run.process.processIdentifier, SIGKILL)
        run.process.waitUntilExit()
        // ssh itself lives on (it was signin's child, not killed): the remote side asks again through it.
        #expect(waitFor { SSHAgentTests.log(box).contains("the signin ssh that opened it ended") }, "\(SSHAgentTests.log(box))")
        _ = FileManager.default.createFile(atPath: marker, contents: nil)
        lines += run.lines()
        #expect(lines.contains("after=3"), "\(lines)")
    }

    // Part 6: through the agent, impersonation is served only when forwarded, and never silently dropped; force,
    // min-ttl and --json mean what they mean locally.
    @Test func throughTheAgentTheRequestIsTheSameAsLocally() throws {
        let strict = try Shared.strict.get()
        let box = try Self.laptop(strict)
        let sa = GoogleShape.serviceAccount
        let remote = try RemoteMachine(box)
        let local = GoogleShape.json(try box.signin("token", "--json").stdout)
        let script = """
            signin token --impersonate-service-account \(sa); echo "sa=$?"
            signin exec --impersonate-service-account \(sa) -- true; echo "exec=$?"
            printf '%s' registry.example | signin docker-credential get --impersonate-service-account \(sa) >/dev/null; echo "docker=$?"
            a=$(signin token); b=$(signin token --force-refresh); [ -n "$b" ] && [ "$a" != "$b" ] && echo forced
            c=$(signin token --min-ttl 4000); [ -n "$c" ] && [ "$b" != "$c" ] && echo longer
            signin token --json
            """
        let r = try box.signin(["ssh"] + remote.sshArguments + [script])
        let out = Self.lines(r.stdout)
        #expect(out.contains("sa=3") && out.contains("exec=3") && out.contains("docker=3"), "\(r.stdout) \(r.stderr)")
        #expect(r.stderr.contains("impersonating \(sa) is not forwarded"), "\(r.stderr)")
        #expect(out.contains("forced"), "--force-refresh through the agent gave the cached token: \(r.stdout) \(r.stderr)")
        let json = GoogleShape.json(out.last ?? "")
        #expect(json["sub"] as? String == local["sub"] as? String && json["sub"] as? String == "alice", "\(json)")
        #expect(!out.contains("longer"), "a second chosen refresh within 30 s is refused, not served")
        #expect(r.stderr.contains("the next may be forced in"), "\(r.stderr)")

        let forwarded = try box.signin(["ssh", "--impersonate-service-account", sa] + remote.sshArguments + ["signin token --impersonate-service-account \(sa)"])
        #expect(forwarded.status == 0 && forwarded.stdout.hasPrefix("sa-at-"), "\(forwarded.stdout) \(forwarded.stderr)")
        #expect(SSHAgentTests.log(box).contains("served access token of service account \(sa)"))
    }

    // Part 7: a pending question blocks no one; remote root cannot force refreshes in a loop; the log is bounded.
    @Test func theAgentCanBeNeitherFrozenNorFlooded() throws {
        let strict = try Shared.strict.get()
        let box = try Self.laptop(strict)
        let remote = try RemoteMachine(box)
        let asked = box.root.appendingPathComponent("asked").path
        let answer = box.root.appendingPathComponent("answer").path
        let askpass = box.root.appendingPathComponent("askpass.sh").path
        try "#!/bin/sh\ntouch \(asked)\nwhile [ ! -e \(answer) ]; do sleep 0.05; done\nexit 0\n".write(toFile: askpass, atomically: true, encoding: .utf8)
        chmod(askpass, 0o755)
        // The log is already at its limit: the next line moves it aside.
        let logFolder = box.environment["XDG_STATE_HOME"]! + "/signin"
        try FileManager.default.createDirectory(atPath: logFolder, withIntermediateDirectories: true)
        try Data(repeating: UInt8(ascii: "x"), count: AgentProtocol.logLimit).write(to: URL(fileURLWithPath: logFolder + "/agent.log"))
        let run = try RunningSignin(box, ["ssh", "--confirm"] + remote.sshArguments + ["signin token >/dev/null; echo confirmed=$?"], env: ["SIGNIN_ASKPASS": askpass])
        #expect(waitFor(seconds: 60) { FileManager.default.fileExists(atPath: asked) })
        // While the question waits for the person, the agent answers everyone else.
        let list = try box.signin("agent", "--list")
        #expect(list.status == 0 && list.stdout.contains("root@127.0.0.1"), "\(list.stdout) \(list.stderr)")
        let own = try box.signin(["token"], env: ["SIGNIN_AGENT_SOCK": box.environment["XDG_RUNTIME_DIR"]! + "/signin/agent.sock"])
        #expect(own.status == 0, "\(own.stderr)")
        _ = FileManager.default.createFile(atPath: answer, contents: nil)
        let lines = run.lines()
        #expect(lines.contains("confirmed=0"), "\(lines) \(run.stderr)")
        _ = run.stop(0)

        // Remote root marks each token rejected and asks again: one refresh, then 429s.
        let before = try strict.stats(box.clientID)["refreshes"] as? Int ?? 0
        let flood = """
            for i in 1 2 3 4 5 6 7 8; do
              t=$(signin token 2>/dev/null)
              curl -s -o /dev/null -w '%{http_code} ' -X POST -H "X-Signin-Token: $t" --unix-socket "$SIGNIN_AGENT_SOCK" http://agent/v1/rejected
            done
            """
        let r = try box.signin(["ssh"] + remote.sshArguments + [flood])
        let codes = r.stdout.split(separator: " ").map(String.init)
        #expect(codes.count == 8 && codes.first == "204" && codes.dropFirst().allSatisfy { $0 == "429" }, "\(r.stdout) \(r.stderr)")
        let after = try strict.stats(box.clientID)["refreshes"] as? Int ?? 0
        #expect(after - before <= 1, "\(after - before) refreshes forced from the remote side")
        // The log moved aside at its limit and goes on small.
        let size = (try? FileManager.default.attributesOfItem(atPath: logFolder + "/agent.log")[.size] as? Int) ?? nil
        #expect((size ?? Int.max) < AgentProtocol.logLimit, "agent.log is \(size ?? -1) bytes")
        #expect(FileManager.default.fileExists(atPath: logFolder + "/agent.log.1"))
    }

    // Part 8: an IAM token with control characters is refused like a token endpoint's, and a destination is
    // never an option.
    @Test func iamTokensWithControlCharactersAreRefused() throws {
        let strict = try Shared.strict.get()
        let box = try GoogleShape.sandbox(strict, settings: ["sa_allowed": [GoogleShape.serviceAccount], "sa_token_suffix": "\u{1B}]0;owned\u{07}\r\nX: 1"])
        let r = try box.signin("token", "--impersonate-service-account", GoogleShape.serviceAccount)
        #expect(r.status == 5 && r.stdout.isEmpty, "\(r.status) \(r.stdout.debugDescription)")
        #expect(r.stderr.contains("characters a token may not contain"), "\(r.stderr)")
        #expect(!r.stderr.unicodeScalars.contains { $0.value == 0x1B })
        let ssh = try box.signin("ssh", "--", "-oProxyCommand=touch \(box.root.path)/owned", "true")
        #expect(ssh.status == 2 && ssh.stderr.contains("is not a destination"), "\(ssh.stderr)")
        #expect(!FileManager.default.fileExists(atPath: box.root.path + "/owned"))
    }
}

/// Another user's listener on a Unix socket (uid 65534, Python), answering every request 200 as an agent would,
/// and recording what it was sent.
final class FakeAgent: @unchecked Sendable {
    let process = Process()
    private let input = Pipe()
    private let log: String

    init(_ path: String, store: String) throws {
        log = path + ".log"
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        process.arguments = ["--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", Paths.providers.appendingPathComponent("fake_agent.py").path, path, log, store]
        let out = Pipe()
        process.standardOutput = out
        process.standardInput = input
        try process.run()
        let ready = out.fileHandleForReading.availableData
        guard String(decoding: ready, as: UTF8.self).hasPrefix("READY") else { throw HarnessError(description: "the fake agent did not start") }
    }

    func requests() -> [String] { ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init) }

    func stop() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }

    deinit { if process.isRunning { process.terminate() } }
}
