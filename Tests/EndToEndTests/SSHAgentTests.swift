import Foundation
import Testing

/// A laptop and a machine reached over SSH: Debian's sshd on 127.0.0.1 at a free port, started by the test with
/// its own host key and one authorized key, whose sessions get a HOME and runtime folder of their own (the remote
/// side), and `signin ssh` into it.
final class RemoteMachine: @unchecked Sendable {
    let sshd: Provider
    let folder: URL
    let home: URL
    let run: URL

    init(_ box: Sandbox) throws {
        folder = box.root.appendingPathComponent("remote")
        home = folder.appendingPathComponent("home")
        run = URL(fileURLWithPath: try box.shortFolder())
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        let signinDir = URL(fileURLWithPath: Paths.signin).deletingLastPathComponent().path
        sshd = try Provider(script: "sshd.py", arguments: [folder.appendingPathComponent("sshd").path, "HOME=\(home.path)", "XDG_RUNTIME_DIR=\(run.path)",
                                                         "PATH=\(signinDir):/usr/bin:/bin"])
    }

    /// What goes after `signin ssh ... --`: the server, its key, the client key, and no ssh configuration of the machine's.
    var sshArguments: [String] {
        let d = folder.appendingPathComponent("sshd").path
        return ["-F", "/dev/null", "-p", String(sshd.port), "-i", d + "/client_key", "-o", "UserKnownHostsFile=\(d)/known_hosts",
                "-o", "StrictHostKeyChecking=yes", "-o", "BatchMode=yes", "-o", "LogLevel=ERROR", "root@127.0.0.1"]
    }

    /// Every file below the remote HOME (what signin would have written there).
    func homeFiles() -> [String] { (FileManager.default.enumerator(atPath: home.path)?.allObjects as? [String]) ?? [] }

    deinit { sshd.stop() }
}

@Suite struct SSHAgentTests {
    static func laptop(_ strict: Provider, extra: [String: Any] = [:]) throws -> Sandbox {
        let box = try strict.signedInSandbox(extra: extra)
        box.environment["XDG_RUNTIME_DIR"] = try box.shortFolder()
        box.environment["XDG_STATE_HOME"] = box.root.appendingPathComponent("state").path
        return box
    }

    static func log(_ box: Sandbox) -> String {
        (try? String(contentsOfFile: box.environment["XDG_STATE_HOME"]! + "/signin/agent.log", encoding: .utf8)) ?? ""
    }

    @Test func theRemoteSideGetsTheLaptopsTokensAndNothingOfSigninIsWrittenThere() throws {
        let strict = try Shared.strict.get()
        let box = try Self.laptop(strict, extra: ["git_hosts": ["git.example.org"]])
        _ = try box.signin(["login"], env: ["STANDIN_SUB": "bob"])
        #expect(try box.signin("use", "alice@example.org").status == 0)
        let remote = try RemoteMachine(box)
        let token = try box.signin("token").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let idToken = try box.signin("id-token").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let script = """
            signin token; echo "rc=$?"
            signin id-token; echo "rc=$?"
            signin exec -- sh -c 'echo "exec=$SIGNIN_ACCESS_TOKEN"'
            signin kubectl-credential; echo
            printf 'protocol=https\\nhost=git.example.org\\n\\n' | signin git-credential get
            printf 'protocol=https\\nhost=evil.example\\n\\n' | signin git-credential get; echo "git-evil=$?"
            signin token --account bob@example.org; echo "bob=$?"
            echo "sock=$SIGNIN_AGENT_SOCK"
            """
        let r = try box.signin(["ssh"] + remote.sshArguments + [script])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(lines.prefix(4) == [token, "rc=0", idToken, "rc=0"], "\(r.stdout) \(r.stderr)")
        #expect(lines.contains("exec=\(token)"))
        #expect(r.stdout.contains("\"token\":\"\(idToken)\""), "kubectl-credential")
        #expect(lines.contains("password=\(token)") && lines.contains("username=alice@example.org"), "git-credential")
        #expect(lines.contains("git-evil=2"))
        #expect(lines.contains("bob=3"), "an account not forwarded is refused")
        #expect(r.stderr.contains("bob@example.org is not forwarded to this machine (forwarded: alice@example.org)"), "\(r.stderr)")
        // The socket was in the remote user's runtime folder, and is gone with the session; so is the laptop's end.
        let sock = try #require(lines.first { $0.hasPrefix("sock=") }).dropFirst(5)
        #expect(sock.hasPrefix(remote.run.path + "/signin-agent-"), "\(sock)")
        #expect(!FileManager.default.fileExists(atPath: String(sock)))
        #expect((try FileManager.default.contentsOfDirectory(atPath: box.environment["XDG_RUNTIME_DIR"]! + "/signin")) == ["agent.sock"])
        #expect(remote.homeFiles().isEmpty, "signin wrote \(remote.homeFiles()) on the remote side")
        // The laptop's log: each request, with host, account and kind, never a token.
        let log = Self.log(box)
        #expect(log.contains("from root@127.0.0.1: served access token for alice@example.org"), "\(log)")
        #expect(log.contains("served ID token for alice@example.org"))
        #expect(log.contains("refused access token for bob@example.org (not forwarded)"))
        #expect(log.contains("session ended"))
        #expect(!log.contains(token) && !log.contains(idToken))
        #expect(try box.signin("agent", "--list").stdout.contains("No forwarded sessions"))
    }

    @Test func anotherUserOnTheRemoteSideCannotUseTheSocketAndLockEndsTheForwarding() throws {
        let strict = try Shared.strict.get()
        let box = try Self.laptop(strict)
        let remote = try RemoteMachine(box)
        let marker = box.root.appendingPathComponent("go").path
        let script = """
            setpriv --reuid=65534 --regid=65534 --clear-groups env SIGNIN_AGENT_SOCK="$SIGNIN_AGENT_SOCK" signin token; echo "nobody=$?"
            signin token >/dev/null; echo "before=$?"
            echo ready
            while [ ! -e \(marker) ]; do sleep 0.05; done
            signin token; echo "after=$?"
            """
        let run = try RunningSignin(box, ["ssh"] + remote.sshArguments + [script])
        var lines = run.lines(through: "ready")
        #expect(lines.contains("nobody=3") && lines.contains("before=0"), "\(lines) \(run.stderr)")
        let listed = try box.signin("agent", "--list")
        #expect(listed.stdout.contains("root@127.0.0.1") && listed.stdout.contains("alice@example.org") && listed.stdout.contains("until the end of the SSH session"), "\(listed.stdout)")
        let lock = try box.signin("lock")
        #expect(lock.stdout.contains("ended every session forwarded"), "\(lock.stdout)")
        _ = FileManager.default.createFile(atPath: marker, contents: nil)
        lines += run.lines()
        _ = run.stop(0)
        #expect(lines.contains("after=3"), "\(lines)")
        #expect(run.stderr.contains("not yours to use") || run.stderr.contains("Permission denied"), "\(run.stderr)")
        #expect(Self.log(box).contains("session ended: signin lock"))
    }

    @Test func forTwoSecondsExpiresAndConfirmAsksOncePerKind() throws {
        let strict = try Shared.strict.get()
        let box = try Self.laptop(strict)
        let remote = try RemoteMachine(box)
        // Keeps asking until the session refuses (it ends 2 s after it began; at most 20 s of asking).
        let script = """
            signin token >/dev/null; echo "first=$?"
            i=0; while signin token >/dev/null 2>&1 && [ $i -lt 200 ]; do i=$((i+1)); sleep 0.1; done
            signin token; echo "last=$?"
            """
        let r = try box.signin(["ssh", "--for", "2s"] + remote.sshArguments + [script])
        #expect(r.stdout.contains("first=0") && r.stdout.contains("last=3"), "\(r.stdout) \(r.stderr)")
        #expect(r.stderr.contains("this forwarded session has ended (its time is up)"), "\(r.stderr)")
        // Said in signin's words, once on the laptop, never as ssh's "connect to ... failed" on each use.
        #expect(r.stderr.components(separatedBy: "ended (--for 2 s is up)").count == 2 && !r.stderr.contains("connect to"), "\(r.stderr)")
        #expect(Self.log(box).contains("session ended: its time is up"))

        // --confirm: the laptop's askpass program is asked once per account and token kind; "no" is a refusal.
        let askpass = box.root.appendingPathComponent("askpass.sh").path
        let asked = box.root.appendingPathComponent("asked.log").path
        try "#!/bin/sh\necho \"$1\" >> \(asked)\ncase \"$1\" in *ID*) exit 1;; esac\nexit 0\n".write(toFile: askpass, atomically: true, encoding: .utf8)
        chmod(askpass, 0o755)
        let confirmed = try box.signin(["ssh", "--confirm"] + remote.sshArguments + ["signin token >/dev/null; echo a=$?; signin token >/dev/null; echo b=$?; signin id-token >/dev/null; echo c=$?"],
                                       env: ["SIGNIN_ASKPASS": askpass])
        #expect(confirmed.stdout == "a=0\nb=0\nc=3\n", "\(confirmed.stdout) \(confirmed.stderr)")
        let questions = (try? String(contentsOfFile: asked, encoding: .utf8)) ?? ""
        #expect(questions == "signin: Allow root@127.0.0.1 to get an access token of alice@example.org?\nsignin: Allow root@127.0.0.1 to get an ID token of alice@example.org?\n", "\(questions)")
        let noAskpass = try box.signin(["ssh", "--confirm"] + remote.sshArguments + ["true"], env: ["SIGNIN_ASKPASS": "", "SSH_ASKPASS": ""])
        #expect(noAskpass.status == 2 && noAskpass.stderr.contains("SIGNIN_ASKPASS"))
    }

    @Test func theAgentAnswersOnlyItsUserAndNeverAGrant() throws {
        let strict = try Shared.strict.get()
        let box = try Self.laptop(strict)
        let agent = try RunningSignin(box, ["agent"])
        let first = try #require(agent.readLine())
        let socket = box.environment["XDG_RUNTIME_DIR"]! + "/signin/agent.sock"
        #expect(first == "SIGNIN_AGENT_SOCK=\(socket); export SIGNIN_AGENT_SOCK;")
        var st = stat()
        #expect(lstat(socket, &st) == 0 && st.st_mode & 0o777 == 0o600)
        #expect(lstat(box.environment["XDG_RUNTIME_DIR"]! + "/signin", &st) == 0 && st.st_mode & 0o777 == 0o700)
        let token = try box.signin("token").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let hello = try Subprocess.run("/usr/bin/curl", ["-s", "--unix-socket", socket, "http://agent/v1/hello"])
        #expect(hello.stdout.contains("\"protocol\":1"), "\(hello.stdout)")
        let served = try Subprocess.run("/usr/bin/curl", ["-s", "--unix-socket", socket, "http://agent/v1/token?kind=access"])
        #expect(served.stdout.contains("\"token\":\"\(token)\""))
        // Nothing it answers holds a refresh token (the strict provider's are "rt-"), whatever is asked.
        for path in ["/v1/token?kind=id", "/v1/token?kind=refresh", "/v1/sessions", "/v1/refresh_token", "/v1/key"] {
            let r = try Subprocess.run("/usr/bin/curl", ["-s", "--unix-socket", socket, "http://agent" + path])
            // A whole JSON string that is a refresh token (the same letters can occur inside an ID token's signature).
            #expect(r.stdout.firstMatch(of: /"rt-[A-Za-z0-9_-]{20}/) == nil, "\(path)")
        }
        // The local agent serves SIGNIN_AGENT_SOCK here too.
        let viaAgent = try box.signin(["token"], env: ["SIGNIN_AGENT_SOCK": socket])
        #expect(viaAgent.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == token)
        // Another uid: closed unanswered (and the folder keeps it out besides).
        chmod(box.environment["XDG_RUNTIME_DIR"]!, 0o755)
        chmod(box.environment["XDG_RUNTIME_DIR"]! + "/signin", 0o755)
        chmod(socket, 0o666)
        let other = try Subprocess.run("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/curl", "-s", "--unix-socket", socket, "http://agent/v1/token?kind=access"])
        #expect(!other.stdout.contains(token) && other.status != 0, "\(other)")
        #expect(Self.log(box).contains("refused a connection from another user, uid 65534"))
        #expect(try box.signin("agent", "--stop").status == 0)
        #expect(agent.stop(0).status == 0)
        #expect(!FileManager.default.fileExists(atPath: socket), "the agent removed its socket")
        let gone = try box.signin(["token"], env: ["SIGNIN_AGENT_SOCK": socket])
        #expect(gone.status == 3 && gone.stderr.contains("it is gone") && gone.stderr.contains("connect again with `signin ssh`"), "\(gone.stderr)")
    }

    @Test func theRemoteSideSaysWhatTheAgentOffers() throws {
        let strict = try Shared.strict.get()
        let box = try SSHAgentTests.laptop(strict)
        let who = try box.signin("whoami").stdout.trimmingCharacters(in: .newlines)
        let remote = try RemoteMachine(box)
        let script = """
            signin whoami; echo "w=$?"
            signin status; echo "s=$?"
            signin accounts; echo "a=$?"
            signin login; echo "l=$?"
            signin logout; echo "o=$?"
            """
        let r = try box.signin(["ssh", "--for", "1h"] + remote.sshArguments + [script])
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == who && lines.contains("w=0"), "\(r.stdout) \(r.stderr)")
        #expect(r.stdout.contains("Through the agent forwarded with `signin ssh`") && r.stdout.contains("Accounts: alice@example.org") && lines.contains("s=0"), "\(r.stdout)")
        #expect(lines.contains("* alice@example.org  (forwarded)") && lines.contains("a=0"), "\(r.stdout)")
        #expect(lines.contains("l=2") && lines.contains("o=2"), "\(r.stdout)")
        #expect(r.stderr.contains("Signing in and out happens on the machine the session came from"), "\(r.stderr)")
        #expect(!r.stdout.contains("signin init") && !r.stderr.contains("signin init"), "\(r.stderr)")
        #expect(remote.homeFiles().isEmpty, "signin wrote \(remote.homeFiles()) on the remote side")
    }

    @Test func sshTakesTheConfigurationFileLikeEveryCommand() throws {
        let strict = try Shared.strict.get()
        let box = try SSHAgentTests.laptop(strict)
        let other = box.root.appendingPathComponent("other.json").path
        try Data(contentsOf: URL(fileURLWithPath: box.configPath)).write(to: URL(fileURLWithPath: other))
        #expect(try box.signin(["login", "-c", other], env: ["STANDIN_SUB": "bob", "SIGNIN_CONFIG": ""]).status == 0)
        let remote = try RemoteMachine(box)
        let r = try box.signin(["ssh", "-c", other] + remote.sshArguments + ["signin whoami"])
        #expect(r.status == 0 && r.stdout.contains("bob@example.org"), "\(r.stdout) \(r.stderr)")
        #expect(!r.stderr.contains("cipher"), "\(r.stderr)")
        #expect(try box.signin("agent", "--list").stdout.contains("No forwarded sessions"))
    }
}
