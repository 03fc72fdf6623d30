import Foundation
import Testing

/// An internal error leaves a report a person can send: the version and the crashing thread's frames on standard
/// error and in the state folder (0600), with no token in either, and the store as it was.
@Suite struct CrashReportTests {
    @Test func aFatalSignalLeavesAReportWithoutATokenAndTheStoreIntact() throws {
        let strict = try Shared.strict.get()
        let box = try strict.signedInSandbox()
        let token = try box.signin("token").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let before = box.storeSnapshot()
        let state = box.root.appendingPathComponent("state")
        box.environment["XDG_STATE_HOME"] = state.path
        let r = try box.signin(["token", "--force-refresh"], env: ["SIGNIN_FAILPOINT": "store-after-temp-write:SIGSEGV"])
        #expect(r.status == 1 && r.stderr.contains("internal error (signal 11)"), "\(r.status) \(r.stderr)")
        let version = try box.signin("version").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(r.stderr.contains("signin \(version.split(separator: " ").last.map(String.init) ?? version)"), "the version: \(r.stderr)")
        let frames = r.stderr.split(separator: "\n").filter { $0.hasPrefix("  #") }
        #expect(frames.count >= 3 && frames.allSatisfy { $0.contains("0x") }, "\(r.stderr)")
        let file = state.appendingPathComponent("signin/crash.txt")
        let report = try String(contentsOf: file, encoding: .utf8)
        #expect(report.contains("internal error (signal 11)") && report.contains("  #0 "), "\(report)")
        let mode = try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int
        #expect(mode == 0o600, "\(String(mode ?? 0, radix: 8))")
        #expect(!report.contains(token) && !r.stderr.contains(token), "no token in the report")
        _ = before
        #expect(try box.signin("token").status == 0, "the sign-in still works")
    }

    /// The program's own frames are named by the file that runs, not by the name it was started under (the release
    /// build's static half starts `signin-dynamic` as "signin", where `addr2line -e signin` finds nothing).
    @Test func framesNameTheFileThatRuns() throws {
        let strict = try Shared.strict.get()
        let box = try strict.signedInSandbox()
        let link = box.root.appendingPathComponent("started-as")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: Paths.signin)
        var env = box.environment
        env["SIGNIN_FAILPOINT"] = "store-after-temp-write:SIGSEGV"
        let r = try Subprocess.run(link.path, ["token", "--force-refresh"], env: env.filter { !$0.value.isEmpty })
        let frames = r.stderr.split(separator: "\n").filter { $0.hasPrefix("  #") }
        let own = URL(fileURLWithPath: Paths.signin).resolvingSymlinksInPath().lastPathComponent
        // The release build's static half hands such a run to `signin-dynamic`, which is then the file that runs.
        #expect(frames.contains { $0.contains(" \(own)+0x") || $0.contains(" signin-dynamic+0x") } && !frames.contains { $0.contains("started-as") }, "\(r.stderr)")
    }
}

/// Many sign-ins, refreshes and cached tokens at once on one store (CI runs it again under AddressSanitizer and
/// ThreadSanitizer): none ends in an internal error, and every one succeeds.
@Suite struct SoakTests {
    @Test func parallelSignInsRefreshesAndCachedTokensNeverCrash() throws {
        let strict = try Shared.strict.get()
        let box = try strict.signedInSandbox(["rotate": true])
        let commands: [[String]] = [["login", "--timeout", "60"], ["token", "--force-refresh"], ["token"], ["whoami"], ["status"], ["token", "--min-ttl", "3500"]]
        for round in 0..<3 {
            let runs = try (0..<12).map { i in try ParallelRun(box, commands[(i + round) % commands.count]) }.map { try $0.wait() }
            for r in runs {
                #expect(!r.stderr.contains("internal error") && !r.stderr.contains("signal "), "round \(round): \(r.stderr)")
                #expect(r.status == 0, "round \(round): \(r.status) \(r.stderr)")
            }
        }
        #expect(try box.signin("token").status == 0)
    }
}
