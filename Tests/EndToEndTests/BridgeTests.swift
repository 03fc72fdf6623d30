import Foundation
import Testing

/// The bridges, with the real tools: ID tokens, `exec`, git's credential helper, kubectl's exec plugin.
@Suite struct BridgeTests {
    // MARK: id-token

    @Test func idTokenIsFreshAndItsJSONHasClaims() throws {
        let strict = try Shared.strict.get()
        let box = try strict.signedInSandbox(["id_token_on_refresh": true])
        let r = try box.signin("id-token")
        #expect(r.status == 0, "\(r.stderr)")
        let token = r.stdout.trimmingCharacters(in: .newlines)
        #expect(token.split(separator: ".").count == 3)
        let json = try box.signin("id-token", "--json")
        let obj = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(obj["id_token"] as? String == token)
        #expect((obj["claims"] as? [String: Any])?["sub"] as? String == "alice")
        #expect(obj["expires_at"] is String)
        // It expires within --min-ttl: refreshed, and the provider sends a new one.
        let fresh = try box.signin("id-token", "--min-ttl", "7200")
        #expect(fresh.status == 0 && fresh.stdout != r.stdout, "\(fresh.stderr)")
    }

    @Test func aRefreshWithoutANewIDTokenSaysSo() throws {
        let strict = try Shared.strict.get()
        let box = try strict.signedInSandbox(["id_token_on_refresh": false])
        let r = try box.signin("id-token", "--min-ttl", "7200")
        #expect(r.status == 3)
        #expect(r.stderr.contains("sent no new ID token with the refresh"), "\(r.stderr)")
        #expect(try box.signin("token").status == 0, "the refresh itself was kept")
    }

    // MARK: exec

    @Test func execPutsTheTokenInTheEnvironmentAndPassesTheExitStatus() throws {
        let strict = try Shared.strict.get()
        let box = try strict.signedInSandbox()
        let token = try box.signin("token").stdout.trimmingCharacters(in: .newlines)
        var r = try box.signin("exec", "--", "sh", "-c", #"printf %s "$SIGNIN_ACCESS_TOKEN"; exit 7"#)
        #expect(r.status == 7)
        #expect(r.stdout == token)
        r = try box.signin("exec", "--env", "GOOGLE_OAUTH_ACCESS_TOKEN", "sh", "-c", #"printf %s "$GOOGLE_OAUTH_ACCESS_TOKEN""#)
        #expect(r.stdout == token)
        // Standard input and output pass through; the token is in no process's arguments.
        r = try box.signin(["exec", "--", "sh", "-c", "cat; tr '\\0' ' ' < /proc/$$/cmdline"], stdin: Data("hello\n".utf8))
        #expect(r.stdout.hasPrefix("hello\n"))
        #expect(!r.stdout.contains(token), "\(r.stdout)")
        let id = try box.signin("exec", "--id-token", "--", "sh", "-c", #"printf %s "$SIGNIN_ACCESS_TOKEN""#)
        #expect(id.stdout == (try box.signin("id-token").stdout.trimmingCharacters(in: .newlines)))
        #expect(try box.signin("exec", "--", "no-such-command-here").status == 127)
    }

    @Test func execPassesSignalsThrough() throws {
        let strict = try Shared.strict.get()
        let box = try strict.signedInSandbox()
        // The command kills itself: signin's caller sees it killed, as if it ran alone.
        let own = try box.signin("exec", "--", "sh", "-c", "kill -TERM $$")
        #expect(own.status == SIGTERM, "\(own)")
        // A signal sent to `signin exec` reaches the command (they are one process).
        let marker = box.root.appendingPathComponent("trapped").path
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Paths.signin)
        p.arguments = ["exec", "--", "sh", "-c", "trap 'echo trapped > \(marker); exit 42' TERM; touch \(marker).ready; while :; do sleep 0.05; done"]
        p.environment = box.environment
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        #expect(waitFor { FileManager.default.fileExists(atPath: marker + ".ready") })
        kill(p.processIdentifier, SIGTERM)
        p.waitUntilExit()
        #expect(p.terminationStatus == 42)
        #expect(FileManager.default.fileExists(atPath: marker))
    }

    @Test func execWhenSigningInIsNeededExits3WithoutABrowser() throws {
        let strict = try Shared.strict.get()
        let box = try strict.sandbox()
        let r = try box.signin("exec", "--", "true")
        #expect(r.status == 3)
        #expect(r.stderr.contains("signin login"), "\(r.stderr)")
        #expect(box.standinSteps().isEmpty, "no browser was opened")
        let login = try box.signin("exec", "--login", "--", "sh", "-c", #"test -n "$SIGNIN_ACCESS_TOKEN""#)
        #expect(login.status == 0, "\(login.stderr)")
        #expect(login.stderr.contains("signing in is needed first"))
    }

    // MARK: git

    @Test func gitFetchesWithTheTokenAndARejectedTokenIsRefreshedOnTheNextTry() throws {
        let strict = try Shared.strict.get()
        let box = try strict.signedInSandbox(extra: ["git_hosts": ["127.0.0.1"]])
        let root = box.root.appendingPathComponent("git").path
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let gitEnv = box.environment.merging(["GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e",
                                              "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e"]) { $1 }
        for args in [["init", "-q", "--bare", "\(root)/repo.git"], ["init", "-q", "\(root)/work"], ["-C", "\(root)/work", "commit", "-q", "--allow-empty", "-m", "one"],
                     ["-C", "\(root)/work", "push", "-q", "\(root)/repo.git", "HEAD:refs/heads/main"]] {
            let r = try Subprocess.run("/usr/bin/git", args, env: gitEnv)
            try #require(r.status == 0, "git \(args): \(r.stderr)")
        }
        let server = try Provider(script: "git_server.py", arguments: [root, strict.issuer + "/userinfo"])
        let url = "http://127.0.0.1:\(server.port)/repo.git"
        // A common global set-up first (git's own `store` helper), then README's lines for this host: the helper list
        // is reset for the URL, so no other helper is asked to store the token.
        let base = "http://127.0.0.1:\(server.port)"
        for args in [["config", "--global", "credential.helper", "store"],
                     ["config", "--global", "credential.\(base).helper", ""],
                     ["config", "--global", "--add", "credential.\(base).helper", "!\(Paths.signin) git-credential"]] {
            try #require(try Subprocess.run("/usr/bin/git", args, env: gitEnv).status == 0)
        }
        func lsRemote() throws -> RunResult { try Subprocess.run("/usr/bin/git", ["ls-remote", url], env: gitEnv) }
        var r = try lsRemote()
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("refs/heads/main"))
        let stored = (try? String(contentsOfFile: box.root.path + "/.git-credentials", encoding: .utf8)) ?? ""
        #expect(!stored.contains("at-"), "git's store helper kept the token: \(stored)")
        let stats = try JSONSerialization.jsonObject(with: server.http("GET", "/_stats")) as? [String: Any]
        #expect((stats?["users"] as? [String])?.first == "alice@example.org", "username= is the account's e-mail: \(String(describing: stats))")

        // The provider stops accepting this access token (revoked on its own): git is refused, tells the helper
        // (`erase`), and the next run gets a refreshed token.
        let token = try box.signin("token").stdout.trimmingCharacters(in: .newlines)
        _ = try Subprocess.run("/usr/bin/curl", ["-sS", "-d", "token=\(token)", "-d", "client_id=\(box.clientID)", strict.issuer + "/revoke"])
        let refreshes = try strict.stats(box.clientID)["refreshes"] as? Int ?? 0
        r = try lsRemote()
        #expect(r.status != 0, "the revoked token was refused")
        #expect(try strict.stats(box.clientID)["refreshes"] as? Int == refreshes, "erase does not refresh by itself")
        r = try lsRemote()
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try strict.stats(box.clientID)["refreshes"] as? Int == refreshes + 1)
        #expect(try box.signin("token").stdout.trimmingCharacters(in: .newlines) != token)
    }

    @Test func gitCredentialSpeaksTheProtocol() throws {
        let strict = try Shared.strict.get()
        let box = try strict.signedInSandbox(extra: ["git_username": "oauth2accesstoken", "git_hosts": ["git.example.com", "*.example.org", "127.0.0.1:8080"]])
        let r = try box.signin(["git-credential", "get"], stdin: Data("protocol=https\nhost=git.example.com\n\n".utf8))
        #expect(r.status == 0)
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "username=oauth2accesstoken")
        #expect(lines.contains { $0.hasPrefix("password=at-") })
        #expect(lines.contains { $0.hasPrefix("password_expiry_utc=") })
        #expect(try box.signin(["git-credential", "store"], stdin: Data("protocol=https\nhost=x\nusername=u\npassword=p\n\n".utf8)).stdout.isEmpty)
        // Only the hosts the configuration names; plain http only to this machine; a refusal says how to allow it.
        for (input, allowed) in [("protocol=https\nhost=a.example.org\n", true), ("protocol=https\nhost=example.org\n", false),
                                 ("protocol=https\nhost=evil-example.org\n", false), ("protocol=https\nhost=git.example.com:8443\n", true),
                                 ("protocol=http\nhost=127.0.0.1:8080\n", true), ("protocol=http\nhost=127.0.0.1:9\n", false),
                                 ("protocol=http\nhost=git.example.com\n", false), ("protocol=https\nhost=attacker.example\n", false)] {
            let answer = try box.signin(["git-credential", "get"], stdin: Data((input + "\n").utf8))
            #expect((answer.status == 0 && answer.stdout.contains("password=")) == allowed, "\(input): \(answer.status) \(answer.stderr)")
            if !allowed { #expect(answer.stdout.isEmpty && answer.status == 2 && (answer.stderr.contains("git_hosts") || answer.stderr.contains("plain http")), "\(answer.stderr)") }
        }
        let defaults = try strict.signedInSandbox()
        let refused = try defaults.signin(["git-credential", "get"], stdin: Data("protocol=https\nhost=source.developers.google.com\n\n".utf8))
        #expect(refused.status == 2 && refused.stdout.isEmpty && refused.stderr.contains("none is allowed"), "not Google: no host by default: \(refused.stderr)")
        let none = try strict.sandbox(extra: ["git_hosts": ["x"]])
        let missing = try none.signin(["git-credential", "get"], stdin: Data("host=x\n\n".utf8))
        #expect(missing.status == 3 && missing.stdout.isEmpty)
    }

    // MARK: kubectl

    @Test func kubectlUsesTheIDTokenThroughTheExecPlugin() throws {
        let kubectl = ["/usr/bin/kubectl", "/usr/local/bin/kubectl"].first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let kubectl else {
            Issue.record("not run, so failed: no kubectl on this machine (.ci/run installs Debian's kubernetes-client)")
            return
        }
        let strict = try Shared.strict.get()
        let box = try strict.signedInSandbox()
        let api = try Provider(script: "kube_server.py")
        let kubeconfig = box.root.appendingPathComponent("kubeconfig").path
        try """
            apiVersion: v1
            kind: Config
            clusters:
            - name: test
              cluster: {server: "https://127.0.0.1:\(api.port)", insecure-skip-tls-verify: true}
            users:
            - name: signin
              user:
                exec:
                  apiVersion: client.authentication.k8s.io/v1
                  command: \(Paths.signin)
                  args: [kubectl-credential]
                  interactiveMode: Never
            contexts:
            - name: test
              context: {cluster: test, user: signin}
            current-context: test
            """.write(toFile: kubeconfig, atomically: true, encoding: .utf8)
        let r = try Subprocess.run(kubectl, ["--kubeconfig", kubeconfig, "get", "--raw", "/version"], env: box.environment)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("v1.99.0-signin-test"))
        let seen = try Subprocess.run("/usr/bin/curl", ["-sk", "https://127.0.0.1:\(api.port)/_seen"])
        let idToken = try box.signin("id-token").stdout.trimmingCharacters(in: .newlines)
        #expect(seen.stdout.contains("Bearer \(idToken)"), "\(seen.stdout)")
    }

    @Test func kubectlCredentialAnswersTheVersionAskedAndSignsInOnlyInteractively() throws {
        let strict = try Shared.strict.get()
        let box = try strict.signedInSandbox()
        for version in ["client.authentication.k8s.io/v1beta1", "client.authentication.k8s.io/v1"] {
            let info = #"{"apiVersion":"\#(version)","kind":"ExecCredential","spec":{"interactive":false}}"#
            let r = try box.signin(["kubectl-credential"], env: ["KUBERNETES_EXEC_INFO": info])
            let obj = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
            #expect(obj["apiVersion"] as? String == version)
            #expect(obj["kind"] as? String == "ExecCredential")
            let status = obj["status"] as? [String: Any]
            #expect((status?["token"] as? String)?.split(separator: ".").count == 3)
            #expect(status?["expirationTimestamp"] is String)
        }
        let empty = try strict.sandbox()
        let info = #"{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","spec":{"interactive":false}}"#
        let r = try empty.signin(["kubectl-credential"], env: ["KUBERNETES_EXEC_INFO": info])
        #expect(r.status == 3 && r.stdout.isEmpty)
        #expect(empty.standinSteps().isEmpty, "no browser without a person")
        let interactive = try empty.signin(["kubectl-credential"], env: ["KUBERNETES_EXEC_INFO": info.replacing("false", with: "true")])
        #expect(interactive.status == 0, "\(interactive.stderr)")
        #expect(interactive.stdout.contains("ExecCredential"))
    }

    @Test func kubectlCredentialHandsOutTheAccessTokenWhenAsked() throws {
        let strict = try Shared.strict.get()
        let box = try strict.signedInSandbox()
        let access = try box.signin("token").stdout.trimmingCharacters(in: .newlines)
        let info = #"{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","spec":{"interactive":false}}"#
        let r = try box.signin(["kubectl-credential", "--token", "access"], env: ["KUBERNETES_EXEC_INFO": info])
        let obj = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any], "\(r.stderr)")
        #expect((obj["status"] as? [String: Any])?["token"] as? String == access)
        #expect(try box.signin("kubectl-credential", "--token", "refresh").status == 2)
    }
}
