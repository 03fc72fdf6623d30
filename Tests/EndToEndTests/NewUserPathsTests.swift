import Foundation
import Testing
import SignInKit

/// What a new user and an adopter tripped on in the third walk (issue 31), each against the real binary.
@Suite struct NewUserPathsTests {
    // 7: kubelogin #1083/#1459: clusters whose authenticator takes the access token.
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

    // 7: a provider that registers only http://localhost (Cognito): redirect_host "localhost"; the listener still
    // binds loopback only.
    @Test func aProviderThatRegistersOnlyLocalhostSignsIn() throws {
        let strict = try Shared.strict.get()
        let refused = try strict.sandbox(["only_localhost": true])
        // The provider refuses the redirect to 127.0.0.1 (the browser stays on its error page): no code comes.
        #expect(try refused.signin("login", "--timeout", "3").status == 6, "127.0.0.1 is not registered there")
        let box = try strict.sandbox(["only_localhost": true], extra: ["redirect_host": "localhost"])
        let r = try box.signin("login")
        #expect(r.status == 0, "\(r.stderr)")
        let bad = try strict.sandbox(extra: ["redirect_host": "0.0.0.0"])
        let badLogin = try bad.signin("login")
        #expect(badLogin.status == 2 && badLogin.stderr.contains("redirect_host"), "\(badLogin.stderr)")
    }

    // 7: OpenID Core 11: offline_access goes with prompt=consent, which certified providers require.
    @Test func offlineAccessAsksForConsent() throws {
        let strict = try Shared.strict.get()
        let box = try strict.sandbox(["offline_needs_consent": true], extra: ["scopes": ["openid", "email", "profile", "offline_access"]])
        let r = try box.signin("login")
        #expect(r.status == 0, "\(r.stderr)")
        // A prompt the configuration chose is kept as it is.
        let chosen = try strict.sandbox(["offline_needs_consent": true], extra: ["scopes": ["openid", "offline_access"], "extra_authorization_parameters": ["prompt": "login"]])
        #expect(try chosen.signin("login", "--timeout", "3").status == 6, "the configuration's own prompt was replaced")
    }

    // 3: on the remote side of `signin ssh`, whoami, status, accounts and login say what the agent offers and
    // where signing in happens, never "write one with `signin init`".
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

    // 6: where the address cannot be pasted (a bridge), the list of ways does not start with "Or".
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

    // 6: "no" to init's overwrite question is the person's choice (exit 4, as logout's "no"), not a usage error.
    @Test func noToInitsOverwriteQuestionIsACancel() throws {
        let dir = NSTemporaryDirectory() + "signin-init-no-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let config = dir + "/c.json"
        try Data(#"{"client_id": "x", "issuer": "http://127.0.0.1:9"}"#.utf8).write(to: URL(fileURLWithPath: config))
        let t = try Terminal.run([Paths.signin, "init", "-c", config], steps: ["wait:Overwrite", "send:n"], env: ["HOME": dir, "PATH": "/usr/bin:/bin"])
        #expect(t.exit == 4, "\(t)")
        #expect(try String(contentsOfFile: config, encoding: .utf8).contains("http://127.0.0.1:9"), "the file was changed")
    }

    // 5: invalid_client names the fields and the file to check; status says where the key is as values.
    @Test func invalidClientSaysWhatToCheckAndStatusGivesTheKeyAsValues() throws {
        let strict = try Shared.strict.get()
        let wrong = try strict.sandbox(["secret": "the-real-secret"], secret: "a-wrong-secret")
        let r = try wrong.signin("login")
        #expect(r.status == 5, "\(r.stderr)")
        #expect(r.stderr.contains("check client_id, client_secret and token_endpoint_auth_method in \(wrong.configPath)"), "\(r.stderr)")
        let box = try strict.signedInSandbox()
        let json = GoogleShape.json(try box.signin("status", "--json").stdout)
        #expect(json["key_storage"] as? String == "file" && json["key_path"] as? String == box.storeDir + "/key", "\(json)")
        #expect(json["key"] == nil)
        let text = try box.signin("status").stdout
        #expect(text.contains("\nStore: \(box.storeDir)\n") && text.contains("\nKey: file \(box.storeDir)/key"), "\(text)")
    }

    // 2: trying signin against the project's own provider needs one line, and the browser stand-in runs as named.
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

    // 1: gcloud caches "not on GCE" when no project was named; after the advice is followed it must work at once,
    // and a "no" cached earlier is said and set aside.
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

    // 1: with only project_id and no Resource Manager to ask, the answer says to set project_number.
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

    // 4: `signin ssh -c FILE` forwards that configuration (ssh never sees -c), and leaves no agent session behind.
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

    // 9: generic code over the protocols can call what README promises; SignInUser is Equatable.
    static func signInThenRefresh<C: SignInClientProtocol>(_ client: C) async throws(SignInError) -> String {
        let user = try await client.signIn(options: SignInOptions(timeout: .seconds(60)))
        let refreshed = try await user.refreshTokensIfNeeded(minimumValidity: .seconds(30))
        let restored = try await client.restorePreviousSignIn(minimumValidity: .seconds(30))
        return refreshed.userID + "," + restored.userID
    }

    @Test func theProtocolsCarryWhatREADMEPromisesAndAUserIsEquatable() async throws {
        #expect(try await Self.signInThenRefresh(LibraryDiscoveryUpdatesAndRetryTests.MinimalClient()) == "42,42")
        let strict = try Shared.strict.get()
        let box = try Sandbox(issuer: strict.issuer)
        let client = LibraryDiscoveryUpdatesAndRetryTests().client(box, strict)
        #expect(try await Self.signInThenRefresh(client) == "alice,alice")
        let a = try await client.restorePreviousSignIn()
        let b = try await client.restorePreviousSignIn()
        #expect(a == b, "the same stored sign-in read twice")
        let c = try await client.restorePreviousSignIn(forceRefresh: true)
        #expect(a != c, "a refresh changes the user")
    }

    // 10: disconnect ends in one state for one stored sign-in, online or not: signed out only once revoked.
    @Test func disconnectSignsOutOnlyOnceTheProviderRevoked() async throws {
        let strict = try Shared.strict.get()
        let box = try Sandbox(issuer: strict.issuer)
        let client = LibraryDiscoveryUpdatesAndRetryTests().client(box, strict)
        _ = try await client.signIn()
        try strict.control(box.clientID, ["revoke_fault": "503"])
        let failure: SignInError? = await { () async -> SignInError? in
            do throws(SignInError) { try await client.disconnect(); return nil } catch { return error }
        }()
        guard case .revocationFailed? = failure else { Issue.record("\(String(describing: failure))"); return }
        #expect(client.currentUser != nil, "a failed revocation signed the user out")
        try strict.control(box.clientID, ["revoke_fault": NSNull()])
        try await client.disconnect()
        #expect(client.currentUser == nil)
        #expect(try strict.stats(box.clientID)["revocations"] as? Int ?? 0 >= 1)
    }
}
