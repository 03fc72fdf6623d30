import Foundation
import Testing

/// Every piece of advice is a command that works as printed, with the options the person used; usage errors
/// keep README's promises (JSON with --json, options read wherever they stand).
@Suite struct AdviceTests {
    func corpBox() throws -> (Sandbox, Provider) {
        let strict = try Shared.strict.get()
        let box = try strict.sandbox()
        let dir = box.environment["XDG_CONFIG_HOME"]! + "/signin"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try JSONSerialization.data(withJSONObject: ["client_id": box.clientID, "issuer": strict.issuer]).write(to: URL(fileURLWithPath: dir + "/corp.json"))
        return (box, strict)
    }

    @Test func notSignedInAdviceKeepsTheProfileAndTheAccount() throws {
        let (box, _) = try corpBox()
        let noConfig = ["SIGNIN_CONFIG": ""]
        var r = try box.signin(["whoami", "--profile", "corp"], env: noConfig)
        #expect(r.status == 3 && r.stderr.contains("`signin login --profile corp`"), "\(r.stderr)")
        r = try box.signin(["token"], env: ["SIGNIN_CONFIG": "", "SIGNIN_PROFILE": "corp"])
        #expect(r.status == 3 && r.stderr.contains("`signin login --profile corp`"), "\(r.stderr)")
        r = try box.signin(["token", "--profile", "corp", "--account", "bob@example.org"], env: noConfig)
        #expect(r.stderr.contains("`signin login --profile corp --account bob@example.org`"), "\(r.stderr)")
        r = try box.signin(["whoami", "--profile", "nosuch"], env: noConfig)
        #expect(r.status == 2 && r.stderr.contains("`signin init --profile nosuch`") && !r.stderr.contains("config.example.json"), "\(r.stderr)")
        r = try box.signin(["exec", "--profile", "corp", "--", "/bin/true"], env: noConfig)
        #expect(r.status == 3 && r.stderr.contains("signin exec --login"), "\(r.stderr)")
        // The advice works as printed: the login it names signs in to corp, and then the command does too.
        let login = try box.signin(["login", "--profile", "corp"], env: noConfig)
        #expect(login.status == 0, "\(login.stderr)")
        #expect(try box.signin(["whoami", "--profile", "corp"], env: noConfig).status == 0)
    }

    /// The headless instructions offer `--device` only where the provider has a device endpoint.
    @Test func theDeviceFlowIsSuggestedOnlyWhereTheProviderOffersIt() throws {
        let mock = try Shared.mock.get()
        let strict = try Shared.strict.get()
        let without = try Sandbox(issuer: mock.issuer, secret: "s")
        var r = try without.signin(["login", "--no-browser", "--timeout", "1"], env: ["BROWSER": ""])
        #expect(r.stderr.contains("No browser on this machine") && !r.stderr.contains("--device"), "\(r.stderr)")
        let with = try strict.sandbox()
        r = try with.signin(["login", "--no-browser", "--timeout", "1"], env: ["BROWSER": ""])
        #expect(r.stderr.contains("`signin login --device`"), "\(r.stderr)")
    }

    @Test func usageErrorsWithJSONAreJSONAndOptionsMayComeFirst() throws {
        let (box, _) = try corpBox()
        let r = try box.signin("token", "--json", "--min-ttl", "abc")
        #expect(r.status == 2)
        let o = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
        #expect(o?["exit_code"] as? Int == 2 && (o?["error"] as? String)?.contains("--min-ttl") == true, "\(r.stdout)")
        for args in [["--min-ttl", "5", "token"], ["--passphrase-fd", "3", "token"], ["--min-ttl=5", "token"]] {
            let t = try box.signin(args)
            #expect(t.status == 3 && !t.stderr.contains("unknown command"), "\(args): \(t.stderr)")
        }
    }

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

    /// a `$BROWSER` that names nothing runnable is said to be that, not "set $BROWSER"; a taken port says whose
    /// it is, not "System error".
    @Test func aWrongBrowserAndATakenPortSayWhatIsWrong() throws {
        let strict = try Shared.strict.get()
        let box = try strict.sandbox()
        let r = try box.signin(["login", "--timeout", "2"], env: ["BROWSER": "/nonexistent/browser"], stdin: Data())
        #expect(r.stderr.contains("$BROWSER names /nonexistent/browser, which is not a program that can be run") && !r.stderr.contains("set $BROWSER"), "\(r.stderr)")
        let held = try SilentServer()
        let taken = try box.signin("login", "--port", "\(held.port)")
        #expect(taken.status == 1 && taken.stderr.contains("another program of yours listens there") && !taken.stderr.contains("System error"), "\(taken.stderr)")
    }
}
