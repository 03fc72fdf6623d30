import Foundation
import Testing

/// The release build's two halves (scripts/build-release): the static `signin` answers the cached path itself and
/// hands everything else to `signin-dynamic` beside it. Runs against that build only (CI's second pass,
/// `SIGNIN_TEST_BINARY`); the debug build is one program.
@Suite struct ReleaseSplitTests {
    static var dynamicHalf: String { URL(fileURLWithPath: Paths.signin).deletingLastPathComponent().appendingPathComponent("signin-dynamic").path }

    /// Reported as skipped (not passed) against the debug build, whose binary is one program.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: ReleaseSplitTests.dynamicHalf), "runs against the release build's static half only (SIGNIN_TEST_BINARY)"))
    func theStaticHalfAnswersTheCachedPathAloneAndSaysWhatIsMissingForTheRest() throws {
        let strict = try Shared.strict.get()
        let box = try strict.signedInSandbox()
        let token = try box.signin("token").stdout
        // The static half alone in a folder of its own: no signin-dynamic anywhere it looks.
        let alone = try box.shortFolder() + "/signin"
        try FileManager.default.copyItem(atPath: Paths.signin, toPath: alone)
        let before = box.storeSnapshot()
        let cached = try Subprocess.run(alone, ["token"], env: box.environment)
        #expect(cached.status == 0 && cached.stdout == token, "the cached path needs nothing else: \(cached.stderr)")
        #expect(try Subprocess.run(alone, ["whoami"], env: box.environment).stdout.contains("alice@example.org"))
        // A command's options are found by running its initialiser over an empty command line; an option before the
        // command, or `--version`, reads every command's: none of them looks anywhere that needs the other half.
        let early = try Subprocess.run(alone, ["--min-ttl", "60", "token"], env: box.environment)
        #expect(early.status == 0 && early.stdout == token, "\(early.stderr)")
        let version = try Subprocess.run(alone, ["--version"], env: box.environment)
        #expect(version.status == 0 && version.stdout.hasPrefix("signin "), "\(version.stderr)")
        let refresh = try Subprocess.run(alone, ["token", "--force-refresh"], env: box.environment)
        #expect(refresh.status == 1 && refresh.stdout.isEmpty, "\(refresh.stderr)")
        #expect(refresh.stderr.contains("needs signin-dynamic (a forced refresh loads libcurl)") && refresh.stderr.contains("reinstall signin"), "\(refresh.stderr)")
        let login = try Subprocess.run(alone, ["logout", "--yes"], env: box.environment)
        #expect(login.status == 1 && login.stderr.contains("logout is not on the cached path"), "\(login.stderr)")
        #expect(box.storeSnapshot() == before, "nothing was written before the hand-over")
        // With its other half, the same commands work, under the name they were run by.
        #expect(try box.signin("token", "--force-refresh").status == 0)
        let helper = try Subprocess.run("/bin/bash", ["-c", "exec -a docker-credential-signin \(Paths.signin) get"], env: box.environment, stdin: Data("evil.example\n".utf8))
        #expect(helper.stdout == "credentials not found in native keychain\n", "argv[0] crosses the hand-over: \(helper.stdout) \(helper.stderr)")
    }
}
