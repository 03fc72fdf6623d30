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
}
