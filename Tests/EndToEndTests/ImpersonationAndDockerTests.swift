import Foundation
import Testing

/// Service-account impersonation through the strict provider's IAM Service Account Credentials stand-in.
@Suite struct ImpersonationTests {
    static let sa = GoogleShape.serviceAccount

    @Test func tokenMintsTheServiceAccountsTokenOnceAndKeepsItEncrypted() throws {
        let strict = try Shared.strict.get()
        let box = try GoogleShape.sandbox(strict, settings: ["sa_allowed": [Self.sa]])
        let person = try box.signin("token").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let first = try box.signin("token", "--impersonate-service-account", Self.sa)
        #expect(first.status == 0, "\(first.stderr)")
        let minted = first.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(minted.hasPrefix("sa-at-") && minted != person)
        let again = try box.signin("token", "--impersonate-service-account", Self.sa, "--json")
        #expect(GoogleShape.json(again.stdout)["access_token"] as? String == minted)
        #expect(GoogleShape.json(again.stdout)["sub"] as? String == Self.sa)
        let stats = try strict.stats(box.clientID)
        #expect(stats["iam_calls"] as? Int == 1, "cached until near expiry")
        #expect(stats["sa_scopes"] as? [String] == [GoogleShape.cloudPlatform])
        for (name, data) in box.storeSnapshot() { #expect(!data.contains(minted), "\(name) holds the service account's token in clear") }
        // The configuration's impersonate_service_account does the same, and exec hands the token to a command.
        var config = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: box.configPath))) as! [String: Any]
        config["impersonate_service_account"] = Self.sa
        try box.writeConfig(config)
        #expect(try box.signin("token").stdout.trimmingCharacters(in: .whitespacesAndNewlines) == minted)
        #expect(try box.signin("exec", "--", "/bin/sh", "-c", "printf %s \"$SIGNIN_ACCESS_TOKEN\"").stdout == minted)
    }

    @Test func toolsUnderTheMetadataServerSeeTheServiceAccount() throws {
        let strict = try Shared.strict.get()
        let box = try GoogleShape.sandbox(strict, settings: ["sa_allowed": [Self.sa]])
        let auth = try box.signin("exec", "--gce-metadata", "--impersonate-service-account", Self.sa, "--", Paths.python, "-c", GoogleShape.googleAuthScript)
        #expect(auth.status == 0, "\(auth.stderr)")
        let o = GoogleShape.json(auth.stdout)
        #expect((o["token"] as? String)?.hasPrefix("sa-at-") == true)
        #expect(o["email"] as? String == Self.sa)
        if FileManager.default.isExecutableFile(atPath: GoogleShape.gcloud) {
            let list = try box.signin("exec", "--gce-metadata", "--impersonate-service-account", Self.sa, "--", GoogleShape.gcloud, "auth", "list", "--format=value(account)")
            #expect(list.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == Self.sa, "\(list.stderr)")
            let printed = try box.signin("exec", "--gce-metadata", "--impersonate-service-account", Self.sa, "--", GoogleShape.gcloud, "auth", "print-access-token")
            #expect(printed.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == o["token"] as? String, "\(printed.stderr)")
        }
        // The service account's ID token for any audience, from the server and from `id-token`.
        let id = try box.signin("exec", "--gce-metadata", "--impersonate-service-account", Self.sa, "--", "/bin/sh", "-c",
                                "curl -s -H 'Metadata-Flavor: Google' \"http://$GCE_METADATA_HOST/computeMetadata/v1/instance/service-accounts/default/identity?audience=https://svc.example&format=full\"")
        let direct = try box.signin("id-token", "--impersonate-service-account", Self.sa, "--audience", "https://svc.example", "--json")
        #expect(direct.status == 0, "\(direct.stderr)")
        let c = (GoogleShape.json(direct.stdout)["claims"] as? [String: Any]) ?? [:]
        #expect(c["aud"] as? String == "https://svc.example" && c["email"] as? String == Self.sa)
        #expect(id.stdout.split(separator: ".").count == 3, "\(id.stdout)")
    }

    @Test func aDelegationChainIsPassedAndARefusalNamesTheAccountAndTheRole() throws {
        let strict = try Shared.strict.get()
        let hop = "hop@test-project.iam.gserviceaccount.com"
        let box = try GoogleShape.sandbox(strict, settings: ["sa_allowed": [hop, Self.sa], "sa_missing": ["ghost@test-project.iam.gserviceaccount.com"]])
        let chained = try box.signin("token", "--impersonate-service-account", "\(hop),\(Self.sa)")
        #expect(chained.status == 0, "\(chained.stderr)")
        #expect(try strict.stats(box.clientID)["iam_last_delegates"] as? [String] == ["projects/-/serviceAccounts/\(hop)"])
        let denied = try box.signin("token", "--impersonate-service-account", "intruder@test-project.iam.gserviceaccount.com")
        #expect(denied.status == 5 && denied.stdout.isEmpty)
        #expect(denied.stderr.contains("not allowed to impersonate intruder@test-project.iam.gserviceaccount.com") && denied.stderr.contains("roles/iam.serviceAccountTokenCreator"), "\(denied.stderr)")
        let ghost = try box.signin("token", "--impersonate-service-account", "ghost@test-project.iam.gserviceaccount.com")
        #expect(ghost.status == 5 && ghost.stderr.contains("no service account ghost@test-project.iam.gserviceaccount.com"), "\(ghost.stderr)")
        let bad = try box.signin("token", "--impersonate-service-account", "not an email")
        #expect(bad.status == 2 && bad.stderr.contains("is not a service account's e-mail"))
        // The person's ID token has one audience, their client: another one needs a service account.
        let person = try box.signin("id-token", "--audience", "https://svc.example")
        #expect(person.status == 2 && person.stderr.contains("needs a service account"), "\(person.stderr)")
        #expect(try box.signin("id-token", "--audience", box.clientID).status == 0)
    }
}

/// Debian's docker-registry with token authentication, where the project's token server takes the password only
/// if the test provider accepts it as an access token; skopeo (no daemon) asks `docker-credential-signin`.
final class TokenAuthRegistry: @unchecked Sendable {
    let tokenServer: Provider
    let registry: Provider
    var host: String { "127.0.0.1:\(registry.port)" }

    init(issuer: String, folder: URL) throws {
        let root = folder.appendingPathComponent("registry-root.pem").path
        tokenServer = try Provider(script: "registry_token_server.py", arguments: [issuer, root])
        registry = try Provider(script: "registry.py", arguments: ["http://127.0.0.1:\(tokenServer.port)/token", root, folder.appendingPathComponent("registry").path])
    }

    func stats() throws -> [String: Any] {
        let r = try Subprocess.run("/usr/bin/curl", ["-s", "http://127.0.0.1:\(tokenServer.port)/_stats"])
        return (try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]) ?? [:]
    }

    deinit {
        registry.stop()
        tokenServer.stop()
    }
}

@Suite struct DockerCredentialTests {
    @Test func skopeoPushesAndPullsWithTheHelpersToken() throws {
        try GoogleShape.requireTool("/usr/bin/skopeo", "scripts/setup --tests installs skopeo")
        try GoogleShape.requireTool("/usr/bin/docker-registry", "scripts/setup --tests installs docker-registry")
        let strict = try Shared.strict.get()
        let box = try GoogleShape.sandbox(strict)
        let registry = try TokenAuthRegistry(issuer: strict.issuer, folder: box.root)
        var config = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: box.configPath))) as! [String: Any]
        config["docker_registries"] = [registry.host]
        try box.writeConfig(config)
        // docker-credential-signin on PATH, as scripts/install and the Debian package put it.
        let bin = box.root.appendingPathComponent("bin")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: bin.appendingPathComponent("docker-credential-signin").path, withDestinationPath: Paths.signin)
        box.environment["PATH"] = bin.path + ":" + box.environment["PATH"]!
        let configure = try box.signin("docker-credential", "configure", registry.host)
        #expect(configure.status == 0, "\(configure.stderr)")
        let dockerConfig = try JSONSerialization.jsonObject(with: Data(contentsOf: box.root.appendingPathComponent(".docker/config.json"))) as? [String: Any]
        #expect((dockerConfig?["credHelpers"] as? [String: String])?[registry.host] == "signin")

        let image = box.root.appendingPathComponent("image").path
        #expect(try Subprocess.run(Paths.python, [Paths.providers.appendingPathComponent("oci_image.py").path, image]).status == 0)
        var env = box.environment
        env["XDG_RUNTIME_DIR"] = box.root.appendingPathComponent("run").path
        let push = try Subprocess.run("/usr/bin/skopeo", ["--insecure-policy", "copy", "--dest-tls-verify=false", "oci:\(image):latest", "docker://\(registry.host)/demo/hello:1"], env: env)
        #expect(push.status == 0, "\(push.stderr)")
        let inspect = try Subprocess.run("/usr/bin/skopeo", ["inspect", "--tls-verify=false", "docker://\(registry.host)/demo/hello:1"], env: env)
        #expect(inspect.status == 0 && inspect.stdout.contains("\"Name\": \"\(registry.host)/demo/hello\""), "\(inspect.stderr)")
        let stats = try registry.stats()
        #expect((stats["issued"] as? Int ?? 0) >= 2 && stats["refused"] as? Int == 0, "\(stats)")
        // Signed out, the helper has nothing to give and the registry refuses the push.
        #expect(try box.signin("logout").status == 0)
        let refused = try Subprocess.run("/usr/bin/skopeo", ["--insecure-policy", "copy", "--dest-tls-verify=false", "oci:\(image):latest", "docker://\(registry.host)/demo/hello:2"], env: env)
        #expect(refused.status != 0)
    }

    @Test func theHelperAnswersOnlyTheRegistriesItIsToldAndKeepsNothing() throws {
        let strict = try Shared.strict.get()
        let box = try GoogleShape.sandbox(strict, extra: ["docker_registries": ["europe-docker.pkg.dev", "*.gcr.io", "127.0.0.1:5000"]])
        let token = try box.signin("token").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        for server in ["europe-docker.pkg.dev", "https://eu.gcr.io", "127.0.0.1:5000", "https://europe-docker.pkg.dev/v2/"] {
            let r = try box.signin(["docker-credential", "get"], stdin: Data((server + "\n").utf8))
            #expect(r.status == 0, "\(server): \(r.stderr)")
            let o = GoogleShape.json(r.stdout)
            #expect(o["Username"] as? String == "oauth2accesstoken" && o["Secret"] as? String == token, "\(server)")
        }
        for server in ["evil.example.com", "gcr.io.evil.example", "127.0.0.1:5001", "a.b.gcr.io", "us-docker.pkg.dev"] {
            let r = try box.signin(["docker-credential", "get"], stdin: Data((server + "\n").utf8))
            #expect(r.status == 1 && r.stdout == "credentials not found in native keychain\n", "\(server)")
            #expect(!r.stdout.contains(token) && !r.stderr.contains(token))
        }
        let before = box.storeSnapshot()
        let store = try box.signin(["docker-credential", "store"], stdin: Data(#"{"ServerURL":"127.0.0.1:5000","Username":"u","Secret":"hunter2"}"#.utf8))
        #expect(store.status == 0)
        #expect(try box.signin(["docker-credential", "erase"], stdin: Data("127.0.0.1:5000\n".utf8)).status == 0)
        #expect(box.storeSnapshot() == before)
        #expect(!FileManager.default.fileExists(atPath: box.root.appendingPathComponent(".docker").path))
        let list = GoogleShape.json(try box.signin("docker-credential", "list").stdout)
        #expect(list as? [String: String] == ["europe-docker.pkg.dev": "oauth2accesstoken", "127.0.0.1:5000": "oauth2accesstoken"])
        // Google's registries by default for Google, none for another provider; configure refuses what get would not answer.
        let refused = try box.signin("docker-credential", "configure", "quay.io")
        #expect(refused.status == 2 && refused.stderr.contains("docker_registries") && refused.stderr.contains("quay.io"), "\(refused.stderr)")
        // configure keeps what else is in docker's configuration.
        let dockerDir = box.root.appendingPathComponent(".docker")
        try FileManager.default.createDirectory(at: dockerDir, withIntermediateDirectories: true)
        try Data(#"{"auths":{"quay.io":{"auth":"eDp5"}},"credHelpers":{"other.io":"pass"},"detachKeys":"ctrl-x"}"#.utf8).write(to: dockerDir.appendingPathComponent("config.json"))
        #expect(try box.signin("docker-credential", "configure", "europe-docker.pkg.dev").status == 0)
        let kept = try JSONSerialization.jsonObject(with: Data(contentsOf: dockerDir.appendingPathComponent("config.json"))) as? [String: Any] ?? [:]
        #expect((kept["auths"] as? [String: Any])?["quay.io"] != nil && kept["detachKeys"] as? String == "ctrl-x")
        #expect(kept["credHelpers"] as? [String: String] == ["other.io": "pass", "europe-docker.pkg.dev": "signin"])
    }
}
