import Foundation
import SignInKit  // the public API only, as a Swift program would use it
import Testing

@Suite struct ReadmeExampleTests {
    @Test func theReadmeProgramSignsInThenRestores() throws {
        let strict = try Shared.strict.get()
        let box = try Sandbox(issuer: strict.issuer)
        let hello = Paths.built("signin-hello")
        let env = box.environment.filter { !$0.value.isEmpty }
        // A program of its own: its configuration and store under its name, apart from the signin command's.
        let own = env["XDG_CONFIG_HOME"]! + "/signin-hello"
        try FileManager.default.createDirectory(atPath: own, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: box.configPath, toPath: own + "/config.json")
        let first = try Subprocess.run(hello, [], env: env)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.hasPrefix("Hello, Alice Example <alice@example.org>\n"))
        // The library writes nothing to the program's standard error: the new store key's notice (a file, for want
        // of a keyring here) goes to the program's events, which this program does not print.
        #expect(first.stderr.isEmpty, "\(first.stderr)")
        #expect(first.stdout.contains("for openid email profile"))
        let second = try Subprocess.run(hello, [], env: env.merging(["STANDIN_MODE": "none"]) { $1 })  // no browser needed now
        #expect(second.status == 0, "\(second.stderr)")
        #expect(try strict.stats(box.clientID)["authorize_requests"] as? Int == 1)
        #expect(FileManager.default.fileExists(atPath: env["XDG_DATA_HOME"]! + "/signin-hello"))
        #expect(!FileManager.default.fileExists(atPath: box.storeDir), "the signin command's store is untouched")
    }

    /// Without a configuration, each example says which file it needs and how to write it, and exits 1: no
    /// backtrace, no crash.
    @Test func theExamplesSayWhatTheyNeedAndExitCleanly() throws {
        let box = try Sandbox(issuer: "http://127.0.0.1:9")
        var env = box.environment.filter { !$0.value.isEmpty }
        env["SIGNIN_CONFIG"] = nil
        for (name, file) in [("signin-hello", "/signin-hello/config.json"), ("signin-tasks", "/my-tool/config.json")] {
            let r = try Subprocess.run(Paths.built(name), [], env: env)
            #expect(r.status == 1 && r.stderr.contains(file) && r.stderr.contains("signin init -c") && !r.stderr.contains("Fatal error"), "\(name): \(r.status) \(r.stderr)")
        }
    }
}
