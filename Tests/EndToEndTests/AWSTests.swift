import Foundation
import Testing

/// AWS roles from signin's sign-in: aws-cli (from the test venv) with a `credential_process` profile that
/// `signin aws configure` wrote, against STS on loopback (moto, behind the project's front that verifies the web
/// identity token against the provider's keys, refuses roles that do not trust it, and counts the calls).
@Suite struct AWSTests {
    static let role = "arn:aws:iam::123456789012:role/deployer"

    /// A signed-in user of the strict provider whose configuration points AWS STS at a fresh stand-in.
    static func setUp() throws -> (Sandbox, Provider) {
        let strict = try Shared.strict.get()
        let sts = try Provider(script: "aws_sts.py", arguments: [strict.issuer])
        let box = try strict.signedInSandbox(extra: ["aws_sts_endpoint": sts.issuer])
        box.environment["AWS_CONFIG_FILE"] = box.root.appendingPathComponent("aws/config").path
        box.environment["AWS_SHARED_CREDENTIALS_FILE"] = box.root.appendingPathComponent("aws/credentials").path
        box.environment["AWS_ENDPOINT_URL"] = sts.issuer
        box.environment["AWS_DEFAULT_REGION"] = "us-east-1"
        box.environment["AWS_EC2_METADATA_DISABLED"] = "true"
        return (box, sts)
    }

    static var aws: String { URL(fileURLWithPath: Paths.python).deletingLastPathComponent().appendingPathComponent("aws").path }

    static func assumeCount(_ sts: Provider) throws -> Int {
        let o = try JSONSerialization.jsonObject(with: try sts.http("GET", "/_count")) as? [String: Any]
        return o?["assume"] as? Int ?? -1
    }

    static func json(_ text: String) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]) ?? [:]
    }

    @Test func awsCLIAssumesTheRoleThroughTheProfileSigninWroteAndTenCallsMakeOneSTSCall() throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.aws), "aws-cli missing from the test venv (Tests/Providers/requirements.txt)")
        let (box, sts) = try Self.setUp()
        defer { sts.stop() }
        // A file with another profile and a comment: both stay.
        let configFile = box.environment["AWS_CONFIG_FILE"]!
        try FileManager.default.createDirectory(atPath: (configFile as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try "# mine\n[profile other]\nregion = eu-west-1\n".write(toFile: configFile, atomically: true, encoding: .utf8)
        let configured = try box.signin("aws", "configure", "--aws-profile", "dev", "--role-arn", Self.role)
        #expect(configured.status == 0, "\(configured.stderr)")
        let text = try String(contentsOfFile: configFile, encoding: .utf8)
        #expect(text.hasPrefix("# mine\n[profile other]\nregion = eu-west-1\n\n[profile dev]\ncredential_process = \(Paths.signin) aws-credential-process --role-arn \(Self.role)\n"), "\(text)")

        let who = try Subprocess.run(Self.aws, ["sts", "get-caller-identity", "--profile", "dev", "--output", "json"], env: box.environment)
        #expect(who.status == 0, "\(who.stderr)")
        #expect(Self.json(who.stdout)["Arn"] as? String == "arn:aws:sts::123456789012:assumed-role/deployer/alice@example.org", "\(who.stdout)")
        #expect(try Self.assumeCount(sts) == 1)

        // Ten aws-cli processes at once: every one answered, STS asked no more (the keys are cached, encrypted).
        let runs = (0..<10).map { _ in ParallelCommand(Self.aws, ["sts", "get-caller-identity", "--profile", "dev", "--output", "json"], env: box.environment) }
        let results = try runs.map { try $0.wait() }
        #expect(results.allSatisfy { $0.status == 0 && $0.stdout.contains("assumed-role/deployer/alice@example.org") }, "\(results.map(\.stderr))")
        #expect(try Self.assumeCount(sts) == 1, "ten calls made one AssumeRoleWithWebIdentity")

        // The keys are nowhere on disk in clear.
        let process = try box.signin("aws-credential-process", "--role-arn", Self.role)
        let keys = Self.json(process.stdout)
        #expect(keys["Version"] as? Int == 1 && keys["Expiration"] is String, "\(process.stdout)")
        let secret = try #require(keys["SecretAccessKey"] as? String)
        let session = try #require(keys["SessionToken"] as? String)
        let files = FileManager.default.enumerator(atPath: box.root.path)?.allObjects as? [String] ?? []
        for f in files {
            guard let data = FileManager.default.contents(atPath: box.root.appendingPathComponent(f).path) else { continue }
            let text = String(decoding: data, as: UTF8.self)
            #expect(!text.contains(secret) && !text.contains(session), "\(f) holds the AWS keys in clear")
        }
        // --force-refresh asks STS again.
        #expect(try box.signin("aws-credential-process", "--role-arn", Self.role, "--force-refresh").status == 0)
        #expect(try Self.assumeCount(sts) == 2)
    }

    @Test func aRoleThatDoesNotTrustTheProviderOrAnIssuerSTSDoesNotKnowIsExit5NamingWhatToFix() throws {
        let (box, sts) = try Self.setUp()
        defer { sts.stop() }
        let before = box.storeSnapshot()
        let untrusted = "arn:aws:iam::123456789012:role/untrusted-builder"
        var r = try box.signin("aws-credential-process", "--role-arn", untrusted)
        #expect(r.status == 5 && r.stdout.isEmpty, "\(r.stderr)")
        #expect(r.stderr.contains("AccessDenied") && r.stderr.contains(untrusted) && r.stderr.contains("trust policy"), "\(r.stderr)")
        #expect(box.storeSnapshot() == before, "a refusal changes nothing stored")
        // STS that trusts another issuer: the ID token is not accepted.
        let other = try Provider(script: "aws_sts.py", arguments: ["https://issuer.example"])
        defer { other.stop() }
        r = try box.signin(["aws-credential-process", "--role-arn", Self.role], env: ["SIGNIN_CONFIG": try Self.configWith(box, sts: other.issuer)])
        #expect(r.status == 5 && r.stderr.contains("InvalidIdentityToken") && r.stderr.contains("IAM OpenID Connect provider"), "\(r.stderr)")
        // What STS would refuse anyway is a usage error before any network.
        r = try box.signin("aws-credential-process", "--role-arn", "deployer")
        #expect(r.status == 2 && r.stderr.contains("is not a role ARN"), "\(r.stderr)")
        r = try box.signin("aws-credential-process", "--role-arn", Self.role, "--duration", "13h")
        #expect(r.status == 2 && r.stderr.contains("15 minutes to 12 hours"), "\(r.stderr)")
        #expect(try Self.assumeCount(sts) == 1 && Self.assumeCount(other) == 1)
    }

    /// boto3 reading `AWS_WEB_IDENTITY_TOKEN_FILE` itself (a new session each second, so each call reads the file
    /// and asks STS, which refuses an expired ID token) under `signin exec --token-file --id-token`, for longer than
    /// two lifetimes of 12-second ID tokens.
    static let boto3Loop = """
        import boto3, json, os, sys, time
        f = os.environ["AWS_WEB_IDENTITY_TOKEN_FILE"]
        seen, used, ok, fails, arn = [], set(), 0, [], None
        end = time.time() + float(sys.argv[1])
        while time.time() < end:
            token = open(f).read()
            if not seen or seen[-1] != token:
                seen.append(token)
            try:
                arn = boto3.session.Session().client("sts").get_caller_identity()["Arn"]
                ok += 1
                used.add(token)
            except Exception as e:
                fails.append(str(e)[:300])
            time.sleep(1)  # pacing the calls, not waiting for anything
        print(json.dumps({"ok": ok, "fails": fails, "distinct": len(seen), "used": len(used), "arn": arn, "file": f}))
        """

    @Test func boto3WithATokenFileKeptFreshSucceedsAcrossTokenLifetimes() throws {
        let strict = try Shared.strict.get()
        let sts = try Provider(script: "aws_sts.py", arguments: [strict.issuer])
        defer { sts.stop() }
        let box = try strict.signedInSandbox(["id_ttl": 12, "id_token_on_refresh": true])
        box.environment["XDG_RUNTIME_DIR"] = try box.shortFolder()
        let script = box.root.appendingPathComponent("boto3loop.py").path
        try Self.boto3Loop.write(toFile: script, atomically: true, encoding: .utf8)
        let env = ["AWS_ROLE_ARN": Self.role, "AWS_ROLE_SESSION_NAME": "token-file", "AWS_ENDPOINT_URL": sts.issuer, "AWS_DEFAULT_REGION": "us-east-1",
                   "AWS_EC2_METADATA_DISABLED": "true", "AWS_CONFIG_FILE": "/dev/null", "AWS_SHARED_CREDENTIALS_FILE": "/dev/null"]
        let r = try box.signin(["exec", "--token-file", "--id-token", "--file-env", "AWS_WEB_IDENTITY_TOKEN_FILE", "--", Paths.python, script, "30"], env: env)
        #expect(r.status == 0, "\(r.stderr)")
        let o = Self.json(r.stdout.split(separator: "\n").last.map(String.init) ?? "")
        // Behaviour, not speed: no call failed, and calls succeeded with at least three tokens in turn (the file was
        // renewed before each expiry), however few calls a loaded machine makes in the time.
        #expect((o["fails"] as? [String])?.isEmpty == true && (o["ok"] as? Int ?? 0) >= 3, "\(r.stdout)")
        #expect((o["distinct"] as? Int ?? 0) >= 3 && (o["used"] as? Int ?? 0) >= 3, "the file changed before each expiry: \(r.stdout)")
        #expect(o["arn"] as? String == "arn:aws:sts::123456789012:assumed-role/deployer/token-file")
        let path = try #require(o["file"] as? String)
        #expect(!FileManager.default.fileExists(atPath: path), "the file is gone after the command")
    }

    static func configWith(_ box: Sandbox, sts: String) throws -> String {
        var config = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: box.configPath))) as! [String: Any]
        config["aws_sts_endpoint"] = sts
        let path = box.root.appendingPathComponent("other-sts.json").path
        try JSONSerialization.data(withJSONObject: config).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func overSigninSSHTheRemoteGetsTheRolesKeysAndNoGrant() throws {
        let (box, sts) = try Self.setUp()
        defer { sts.stop() }
        box.environment["XDG_RUNTIME_DIR"] = try box.shortFolder()
        let remote = try RemoteMachine(box)
        let script = """
            signin aws-credential-process --role-arn \(Self.role) --session-name from-remote; echo "rc=$?"
            signin aws-credential-process --role-arn arn:aws:iam::123456789012:role/untrusted-x; echo "rc=$?"
            """
        let r = try box.signin(["ssh"] + remote.sshArguments + [script])
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 3 && lines[1] == "rc=0" && lines[2] == "rc=5", "\(r.stdout)\n\(r.stderr)")
        let keys = Self.json(lines.first ?? "")
        #expect(keys["Version"] as? Int == 1 && (keys["AccessKeyId"] as? String)?.isEmpty == false, "\(r.stdout)")
        #expect(r.stderr.contains("AccessDenied"), "\(r.stderr)")
        let o = try JSONSerialization.jsonObject(with: try sts.http("GET", "/_count")) as? [String: Any]
        #expect((o?["sessions"] as? [String])?.contains("from-remote") == true)
        #expect(remote.homeFiles().filter { !$0.hasPrefix(".ssh") }.isEmpty, "nothing of signin's is written on the remote side: \(remote.homeFiles())")
    }

    /// `aws configure` writes no line break into aws-cli's file (a profile of the attacker's choosing), and
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
}

/// Any program started now and collected later, to run several at once.
final class ParallelCommand: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private var result: Result<RunResult, Error> = .failure(HarnessError(description: "not run"))

    init(_ exe: String, _ args: [String], env: [String: String]) {
        DispatchQueue.global().async {
            self.result = Result { try Subprocess.run(exe, args, env: env) }
            self.done.signal()
        }
    }

    func wait() throws -> RunResult {
        done.wait()
        return try result.get()
    }
}
