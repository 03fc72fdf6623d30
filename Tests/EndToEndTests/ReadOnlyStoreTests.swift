import Foundation
import Testing

@Suite struct ReadOnlyStoreTests {
    /// Runs signin as an unprivileged user (root ignores file permissions, so as root the test drops to nobody).
    func run(_ box: Sandbox, _ args: [String]) throws -> RunResult {
        let env = box.environment.filter { !$0.value.isEmpty }
        if geteuid() != 0 { return try Subprocess.run(Paths.signin, args, env: env) }
        return try Subprocess.run("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", Paths.signin] + args, env: env)
    }

    @Test func aReadOnlyStoreFolderIsAClearErrorAndKeepsTheOldCredentials() throws {
        let strict = try Shared.strict.get()
        let box = try strict.sandbox(["rotate": false])
        if geteuid() == 0 { _ = try Subprocess.run("/bin/chown", ["-R", "65534:65534", box.root.path]) }
        let login = try run(box, ["login"])
        try #require(login.status == 0, "\(login.stderr)")
        let before = box.storeSnapshot()
        let old = try run(box, ["token"]).stdout
        chmod(box.storeDir, 0o500)
        defer { chmod(box.storeDir, 0o700) }
        let r = try run(box, ["token", "--force-refresh"])
        #expect(r.status == 1, "\(r.stderr)")
        #expect(r.stderr.contains("Cannot write the credential store") && r.stderr.contains("previous credentials are intact"))
        #expect(box.storeSnapshot() == before)
        #expect(try run(box, ["token"]).stdout == old)
    }
}
