import Foundation
import Testing

/// Google Cloud from any OpenID provider: google-auth's executable-sourced `external_account` file that `signin
/// google external-account` writes, and the metadata server with `google_federation_audience` and no file at all
/// (google-auth and gcloud), against the strict provider's stand-in of Google's STS (RFC 8693, the ID token's
/// signature checked) and of the IAM Credentials API.
@Suite struct GoogleFederationTests {
    static let audience = "//iam.googleapis.com/projects/123456789/locations/global/workloadIdentityPools/laptops/providers/company"

    static func sandbox(_ strict: Provider, federation: Bool) throws -> Sandbox {
        var extra: [String: Any] = ["google_sts_endpoint": strict.issuer + "/v1/token"]
        if federation { extra["google_federation_audience"] = audience }
        let box = try GoogleShape.sandbox(strict, settings: ["sts_audiences": [audience], "sa_allowed": [GoogleShape.serviceAccount]], extra: extra)
        return box
    }

    static let pluggable = Paths.providers.appendingPathComponent("google_auth_pluggable.py").path

    @Test func googleAuthRunsSigninAsItsExecutableSourceAndGetsAFederatedToken() throws {
        let strict = try Shared.strict.get()
        let box = try Self.sandbox(strict, federation: false)
        let file = box.root.appendingPathComponent("external.json").path
        let written = try box.signin("google", "external-account", "--audience", Self.audience, "--output", file)
        #expect(written.status == 0, "\(written.stderr)")
        var st = stat()
        #expect(stat(file, &st) == 0 && st.st_mode & 0o777 == 0o600)
        let info = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: file))) as? [String: Any] ?? [:]
        #expect(info["type"] as? String == "external_account" && info["audience"] as? String == Self.audience)
        #expect(info["subject_token_type"] as? String == "urn:ietf:params:oauth:token-type:id_token" && info["token_url"] as? String == strict.issuer + "/v1/token")
        #expect(((info["credential_source"] as? [String: Any])?["executable"] as? [String: Any])?["command"] as? String == "\(Paths.signin) google-executable-source")

        let script = Self.pluggable
        var env = box.environment
        env["GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES"] = "1"
        let r = try Subprocess.run(Paths.python, [script, file], env: env)
        #expect(r.status == 0, "\(r.stderr)")
        #expect((GoogleShape.json(r.stdout)["token"] as? String)?.hasPrefix("fed-") == true, "\(r.stdout)")
        let stats = try strict.stats(box.clientID)
        #expect(stats["sts_exchanges"] as? Int == 1)
        #expect((stats["sts_last"] as? [String: Any])?["audience"] as? String == Self.audience)

        // With a service account: google-auth impersonates it with the federated token.
        let saFile = box.root.appendingPathComponent("external-sa.json").path
        #expect(try box.signin("google", "external-account", "--audience", Self.audience, "--service-account", GoogleShape.serviceAccount, "--output", saFile).status == 0)
        let sa = try Subprocess.run(Paths.python, [script, saFile], env: env)
        #expect((GoogleShape.json(sa.stdout)["token"] as? String)?.hasPrefix("sa-at-") == true, "\(sa.stdout) \(sa.stderr)")

        // Signed out, the executable answers the documented error shape and google-auth says so.
        _ = try box.signin("logout")
        let out = try box.signin("google-executable-source")
        let answer = GoogleShape.json(out.stdout)
        #expect(out.status == 3 && answer["success"] as? Bool == false && answer["version"] as? Int == 1 && (answer["message"] as? String)?.contains("Not signed in") == true, "\(out.stdout)")
        let refused = try Subprocess.run(Paths.python, [script, file], env: env)
        #expect(refused.status != 0 && refused.stderr.contains("Not signed in"), "\(refused.stderr)")
    }

    @Test func theMetadataServerServesFederatedTokensToGoogleAuthAndGcloudWithNoFile() throws {
        try GoogleShape.requireTool(GoogleShape.gcloud, "gcloud comes with the image")
        let strict = try Shared.strict.get()
        let box = try Self.sandbox(strict, federation: true)
        let adc = try box.signin("exec", "--gce-metadata", "--", Paths.python, GoogleShape.googleAuthScript)
        #expect(adc.status == 0, "\(adc.stderr)")
        let token = try #require(GoogleShape.json(adc.stdout)["token"] as? String)
        #expect(token.hasPrefix("fed-"), "\(adc.stdout)")
        let printed = try box.signin("exec", "--gce-metadata", "--", GoogleShape.gcloud, "auth", "print-access-token")
        #expect(printed.status == 0 && printed.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == token, "cached, the same token: \(printed.stdout) \(printed.stderr)")
        #expect(try strict.stats(box.clientID)["sts_exchanges"] as? Int == 1, "one exchange, then the encrypted cache")
        // Impersonating under federation: the service account's token, minted with the federated one.
        let sa = try box.signin("exec", "--gce-metadata", "--impersonate-service-account", GoogleShape.serviceAccount, "--", Paths.python, GoogleShape.googleAuthScript)
        #expect((GoogleShape.json(sa.stdout)["token"] as? String)?.hasPrefix("sa-at-") == true, "\(sa.stdout) \(sa.stderr)")
        #expect(try strict.stats(box.clientID)["sts_exchanges"] as? Int == 1, "the cached federated token bought it")

        // A pool provider that does not trust this client: the tool gets an error, signin names what to fix.
        try strict.control(box.clientID, ["sts_audiences": []])
        let refused = try box.signin("exec", "--gce-metadata", "--verbose", "--", Paths.python, GoogleShape.googleAuthScript, env: ["SIGNIN_CONFIG": try Self.freshStore(box)])
        #expect(refused.status != 0 && refused.stderr.contains("invalid_target") && refused.stderr.contains("does not trust this issuer"), "\(refused.stderr)")
    }

    /// The same configuration and store with another pool provider: nothing cached for it, so the STS is asked.
    static func freshStore(_ box: Sandbox) throws -> String {
        var config = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: box.configPath))) as! [String: Any]
        config["google_federation_audience"] = audience.replacingOccurrences(of: "company", with: "other")
        let path = box.root.appendingPathComponent("other-pool.json").path
        try JSONSerialization.data(withJSONObject: config).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func overSigninSSHTheRemoteGetsTheIDTokenForItsToolsAndNoGrant() throws {
        let strict = try Shared.strict.get()
        let box = try Self.sandbox(strict, federation: false)
        box.environment["XDG_RUNTIME_DIR"] = try box.shortFolder()
        let idToken = try box.signin("id-token").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let remote = try RemoteMachine(box)
        let script = """
            signin google-executable-source; echo "rc=$?"
            signin google external-account --audience \(Self.audience) --output "$HOME/ext.json"; echo "rc=$?"
            cat "$HOME/ext.json"; rm "$HOME/ext.json"
            """
        let r = try box.signin(["ssh"] + remote.sshArguments + [script])
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 4 && lines[1] == "rc=0" && lines[2] == "rc=0", "\(r.stdout)\n\(r.stderr)")
        let answer = GoogleShape.json(lines.first ?? "")
        #expect(answer["success"] as? Bool == true && answer["id_token"] as? String == idToken, "\(r.stdout)")
        let file = GoogleShape.json(lines.last ?? "")
        #expect(file["token_url"] as? String == strict.issuer + "/v1/token", "the laptop's google_sts_endpoint: \(r.stdout)")
        #expect(((file["credential_source"] as? [String: Any])?["executable"] as? [String: Any])?["command"] as? String == "\(Paths.signin) google-executable-source")
        #expect(remote.homeFiles().filter { !$0.hasPrefix(".ssh") }.isEmpty, "\(remote.homeFiles())")
    }

    /// the external_account file's command is read alike by Python (shlex) and Go (split on white space): a
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
}
