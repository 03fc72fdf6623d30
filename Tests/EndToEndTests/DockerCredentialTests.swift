import Foundation
import Testing

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
