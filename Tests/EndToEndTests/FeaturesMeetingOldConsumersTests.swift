import Foundation
import Testing

/// The fifth review (issue 39): where a new feature meets an old consumer, and what a refresh's save needs. Each test
/// failed on the main of the day the review was filed.
@Suite struct FeaturesMeetingOldConsumersTests {
    /// Item 1: with `redirect_host: "localhost"`, a port whose [::1] side another program holds is refused before
    /// the browser opens, saying why (today: the browser goes to the other listener and signin times out).
    @Test func aLocalhostRedirectWhoseIPv6SideIsHeldIsRefusedBeforeTheBrowserOpens() throws {
        let strict = try Shared.strict.get()
        let holder = try SilentServer(ipv6Only: true)
        let box = try strict.sandbox(["only_localhost": true], extra: ["redirect_host": "localhost", "redirect_port": holder.port])
        let start = Date()
        let r = try box.signin("login", "--timeout", "15")
        #expect(r.status == 1, "\(r.stderr)")
        #expect(r.stderr.contains("Cannot listen on [::1]:\(holder.port)") && r.stderr.contains("localhost:\(holder.port)"), "\(r.stderr)")
        #expect(r.stderr.contains("redirect_host"), "the message says what to change: \(r.stderr)")
        #expect(Date().timeIntervalSince(start) < 10, "refused at once, not after the browser's timeout")
        #expect(box.standinSteps().isEmpty, "no browser was opened")
        #expect(!holder.hasPendingConnection, "nothing reached the other listener")
        #expect(box.entryFile() == nil)

        // With the port left to the system, a sign-in to localhost works (both sides are signin's).
        let free = try strict.sandbox(["only_localhost": true], extra: ["redirect_host": "localhost"])
        let ok = try free.signin("login", "--timeout", "60")
        #expect(ok.status == 0, "\(ok.stderr)")
    }

    /// Item 3: `aws configure` writes no line break into aws-cli's file (a profile of the attacker's choosing), and
    /// an account that is not stored is refused before anything is written.
    @Test func awsConfigureRefusesLineBreaksAndUnknownAccountsAndWritesNothing() throws {
        let strict = try Shared.strict.get()
        let box = try strict.signedInSandbox()
        let configFile = box.root.appendingPathComponent("aws-config").path
        try "[profile mine]\nregion = eu-west-1\n".write(toFile: configFile, atomically: true, encoding: .utf8)
        let env = ["AWS_CONFIG_FILE": configFile]
        let role = "arn:aws:iam::123456789012:role/deployer"
        let evil = "alice@example.org\n[profile evil]\ncredential_process = sh -c id"
        let injected = try box.signin(["aws", "configure", "--role-arn", role, "--account", evil], env: env)
        #expect(injected.status != 0, "\(injected.stderr)")
        let unknown = try box.signin(["aws", "configure", "--role-arn", role, "--account", "nobody@example.org"], env: env)
        #expect(unknown.status == 2 && unknown.stderr.contains("nobody@example.org"), "\(unknown.stderr)")
        // A configuration path with a line break in it.
        let oddFolder = box.root.appendingPathComponent("a\n[profile evil2]").path
        try FileManager.default.createDirectory(atPath: oddFolder, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: box.configPath, toPath: oddFolder + "/config.json")
        let oddConfig = try box.signin(["aws", "configure", "--role-arn", role, "-c", oddFolder + "/config.json"], env: env)
        #expect(oddConfig.status == 2 && oddConfig.stderr.contains("control character"), "\(oddConfig.stderr)")
        #expect(try String(contentsOfFile: configFile, encoding: .utf8) == "[profile mine]\nregion = eu-west-1\n")
        // The account by its e-mail is written.
        let ok = try box.signin(["aws", "configure", "--role-arn", role, "--account", "alice@example.org"], env: env)
        #expect(ok.status == 0, "\(ok.stderr)")
        #expect(try String(contentsOfFile: configFile, encoding: .utf8).contains("--account alice@example.org\n"))
    }

    /// Item 18: a provider's 429 says how long it asked to wait (exit 5, nothing changed).
    @Test func aRateLimitedRefreshSaysRetryAfter() throws {
        let strict = try Shared.strict.get()
        let box = try strict.signedInSandbox()
        let before = box.storeSnapshot()
        try strict.control(box.clientID, ["token_fault": "429", "retry_after": 120])
        let r = try box.signin("token", "--force-refresh")
        #expect(r.status == 5, "\(r.stderr)")
        #expect(r.stderr.contains("\(strict.issuer)/token") && r.stderr.contains("wait 120 s (Retry-After)"), "\(r.stderr)")
        #expect(box.storeSnapshot() == before)
        try strict.control(box.clientID, ["token_fault": NSNull(), "retry_after": NSNull()])
    }

    /// Item 6: the external_account file's command is read alike by Python (shlex) and Go (split on white space): a
    /// configuration in the configuration folder is named (`--profile`), and a path that would need quotes is
    /// refused with what to do, not written.
    @Test func theExternalAccountCommandNeedsNoQuotes() throws {
        let strict = try Shared.strict.get()
        let box = try strict.sandbox()
        let audience = GoogleFederationTests.audience
        let folder = box.root.appendingPathComponent("config/signin").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: box.configPath, toPath: folder + "/corp.json")
        let named = try box.signin("google", "external-account", "--audience", audience, "-c", folder + "/corp.json")
        #expect(named.status == 0, "\(named.stderr)")
        let command = (((try? JSONSerialization.jsonObject(with: Data(named.stdout.utf8))) as? [String: Any])?["credential_source"] as? [String: Any])
            .flatMap { ($0["executable"] as? [String: Any])?["command"] as? String }
        #expect(command == "\(Paths.signin) google-executable-source --profile corp", "\(named.stdout)")

        let spaced = box.root.appendingPathComponent("my configs").path
        try FileManager.default.createDirectory(atPath: spaced, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: box.configPath, toPath: spaced + "/config.json")
        let output = box.root.appendingPathComponent("ext.json").path
        let refused = try box.signin("google", "external-account", "--audience", audience, "-c", spaced + "/config.json", "--output", output)
        #expect(refused.status == 2 && refused.stderr.contains("split on white space") && refused.stderr.contains("my configs"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: output))
    }

    /// Item 5: a token file whose signin was SIGKILLed (nobody renews it, and it holds a live token) is removed by the
    /// next `--token-file` run; another run's file, whose signin still runs, is left alone.
    @Test func aTokenFileOfAKilledSigninIsRemovedByTheNextRun() throws {
        let strict = try Shared.strict.get()
        let box = try strict.signedInSandbox()
        box.environment["XDG_RUNTIME_DIR"] = try box.shortFolder()
        let folder = box.environment["XDG_RUNTIME_DIR"]! + "/signin"
        // COMMAND prints the file and its own pid, then waits on its standard input (a pipe the test holds).
        let killed = try RunningSignin(box, ["exec", "--token-file", "--", "/bin/sh", "-c", "echo \"$SIGNIN_TOKEN_FILE $$\"; exec sleep 600"])
        let line = try #require(killed.readLine()).split(separator: " ")
        let orphan = String(line[0])
        let commandPID = try #require(pid_t(line[1]))
        let alive = try RunningSignin(box, ["exec", "--token-file", "--", "/bin/sh", "-c", "echo \"$SIGNIN_TOKEN_FILE $$\"; exec sleep 600"])
        let aliveLine = try #require(alive.readLine()).split(separator: " ")
        let kept = String(aliveLine[0])
        // signin first, so it cannot remove its file; then its COMMAND, which holds the pipe Process waits on.
        kill(killed.process.processIdentifier, SIGKILL)
        kill(commandPID, SIGKILL)
        killed.process.waitUntilExit()
        #expect(FileManager.default.fileExists(atPath: orphan), "the killed signin could not remove its file")
        let next = try box.signin("exec", "--token-file", "--", "/bin/true")
        #expect(next.status == 0, "\(next.stderr)")
        #expect(!FileManager.default.fileExists(atPath: orphan), "the orphaned token file is still in \(folder)")
        #expect(FileManager.default.fileExists(atPath: kept), "a running signin's file was removed")
        kill(pid_t(aliveLine[1])!, SIGTERM)
        alive.process.waitUntilExit()
        #expect(!FileManager.default.fileExists(atPath: kept))
    }

    /// Item 13 (b): the disk fills while a rotating refresh is on its way; the room its save needs was taken before the
    /// request went out, so the rotated refresh token is saved and the next refresh works (before: ENOSPC after the
    /// rotation, the grant lost, and a message saying the previous credentials were intact).
    @Test func aRotatedRefreshTokenIsSavedWhenTheDiskFillsDuringTheRequest() throws {
        let strict = try Shared.strict.get()
        let box = try strict.sandbox(["rotate": true])
        let data = box.root.appendingPathComponent("data").path
        try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
        let mounted = try Subprocess.run("/bin/mount", ["-t", "tmpfs", "-o", "size=1m,mode=0700", "tmpfs", data])
        try #require(mounted.status == 0, "a small tmpfs for the store (the tests run as root): \(mounted.stderr)")
        defer { _ = try? Subprocess.run("/bin/umount", [data]) }
        #expect(try box.signin("login").status == 0)
        try strict.control(box.clientID, ["refresh_delay": 2.0])
        let refresh = try ParallelRun(box, ["token", "--force-refresh"])
        #expect(waitFor { (try? strict.stats(box.clientID)["refreshes"] as? Int ?? 0) == 1 }, "the refresh reached the provider")
        // The disk fills while the provider is answering.
        let fill = try Subprocess.run("/bin/sh", ["-c", "cat /dev/zero > \"$0/fill\"; df -k \"$0\" | tail -1", data])
        #expect(fill.stdout.contains(" 100% "), "the tmpfs is full: \(fill.stdout)")
        let r = try refresh.wait()
        #expect(r.status == 0, "the rotated token was saved into the room taken before the request: \(r.stderr)")
        try strict.control(box.clientID, ["refresh_delay": 0])
        // Full again: a refresh cannot take its room, so it is not sent (nothing spent), and says why.
        _ = try Subprocess.run("/bin/sh", ["-c", "cat /dev/zero >> \"$0/fill\"", data])
        let full = try box.signin("token", "--force-refresh")
        #expect(full.status == 1 && full.stderr.contains("no room to save a refreshed sign-in") && full.stderr.contains("not sent"), "\(full.stderr)")
        #expect(try strict.stats(box.clientID)["refreshes"] as? Int == 1, "no request went out without room for its answer")
        unlink(data + "/fill")
        let next = try box.signin("token", "--force-refresh")
        #expect(next.status == 0, "the grant is alive: \(next.stderr)")
    }

    /// Item 4: a DPoP-bound access token never leaves as a bearer token: userinfo is asked with `Authorization: DPoP`
    /// and a proof (so the profile is there after sign-in, not silently empty), and the bridges whose protocols can
    /// carry only a bearer token refuse it, saying why (exit 2), while `token --json` says `DPoP`.
    @Test func aDPoPBoundTokenGoesWithAProofOrIsRefusedNeverAsABearer() throws {
        let p = try DPoPTests.offered.get()
        let box = try p.sandbox(["id_token_without_profile": true], extra: ["git_hosts": ["git.example.org"], "docker_registries": ["registry.example.org"]])
        let login = try box.signin("login")
        #expect(login.status == 0 && login.stdout.contains("Alice Example <alice@example.org>"), "the profile came from userinfo, with a proof: \(login.stdout) \(login.stderr)")
        #expect(try p.stats(box.clientID)["userinfo_ok"] as? Int == 1)
        #expect(try box.signin("token", "--json").stdout.contains(#""token_type":"DPoP""#))
        let kubectl = try box.signin("kubectl-credential", "--token", "access")
        #expect(kubectl.status == 2 && kubectl.stderr.contains("can carry only a bearer token") && kubectl.stdout.isEmpty, "\(kubectl.stderr)")
        let git = try box.signin(["git-credential", "get"], stdin: Data("protocol=https\nhost=git.example.org\n\n".utf8))
        #expect(git.status == 2 && git.stderr.contains("DPoP") && !git.stdout.contains("password="), "\(git.stdout) \(git.stderr)")
        let docker = try box.signin(["docker-credential", "get"], stdin: Data("registry.example.org\n".utf8))
        #expect(docker.status == 2 && !docker.stdout.contains("Secret"), "\(docker.stdout) \(docker.stderr)")
        // The ID token is no access token: kubectl gets it as ever.
        #expect(try box.signin("kubectl-credential").status == 0)
    }

    /// Item 12: with `impersonate_service_account` in the laptop's configuration, `signin token` over a forwarded
    /// session gives the same principal as on the laptop (the agent's token path applies the configured chain),
    /// and `--impersonate-service-account` stays refused unless forwarded.
    @Test func theConfiguredServiceAccountIsThePrincipalOverAForwardedSessionToo() throws {
        let strict = try Shared.strict.get()
        let sa = GoogleShape.serviceAccount
        let box = try GoogleShape.sandbox(strict, settings: ["sa_allowed": [sa]], extra: ["impersonate_service_account": sa])
        box.environment["XDG_RUNTIME_DIR"] = try box.shortFolder()
        box.environment["XDG_STATE_HOME"] = box.root.appendingPathComponent("state").path
        let here = try box.signin("token", "--json")
        let hereToken = GoogleShape.json(here.stdout)["access_token"] as? String
        #expect(GoogleShape.json(here.stdout)["sub"] as? String == sa && hereToken?.hasPrefix("sa-at-") == true, "\(here.stdout) \(here.stderr)")
        let remote = try RemoteMachine(box)
        let r = try box.signin(["ssh"] + remote.sshArguments + ["signin token --json; echo; signin exec -- sh -c 'printf \"exec=%s\\n\" \"$SIGNIN_ACCESS_TOKEN\"'"])
        #expect(r.status == 0, "\(r.stderr)")
        let first = r.stdout.split(separator: "\n").first.map(String.init) ?? ""
        #expect(GoogleShape.json(first)["sub"] as? String == sa, "the same principal there: \(r.stdout)")
        #expect(GoogleShape.json(first)["access_token"] as? String == hereToken, "\(r.stdout)")
        #expect(r.stdout.contains("exec=\(hereToken ?? "-")"), "\(r.stdout)")
    }
}
