import Foundation
import Testing

/// A signal at the worst moment (a rotating refresh in flight) waits for the save, then acts.
@Suite struct SignalHoldingTests {
    /// A signal that arrives while a rotating refresh is in flight waits until the new refresh token is saved.
    @Test(arguments: [SIGTERM, SIGHUP, SIGINT]) func aSignalDuringARotatingRefreshLosesNothing(sig: Int32) throws {
        let strict = try Shared.strict.get()
        let box = try strict.signedInSandbox(["rotate": true])
        try strict.control(box.clientID, ["refresh_delay": 1.0])
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Paths.signin)
        p.arguments = ["token", "--force-refresh"]
        p.environment = box.environment
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        // Signal once the provider has the request (it has rotated; its answer comes a second later).
        #expect(waitFor { (try? strict.stats(box.clientID)["refreshes"] as? Int ?? 0) == 1 })
        kill(p.processIdentifier, sig)
        p.waitUntilExit()
        #expect(p.terminationReason == .uncaughtSignal && p.terminationStatus == sig,
                "the signal still ends it, after the save: \(p.terminationReason.rawValue) \(p.terminationStatus)")
        try strict.control(box.clientID, ["refresh_delay": 0])
        let next = try box.signin("token", "--force-refresh")
        #expect(next.status == 0, "the rotated refresh token was kept: \(next.stderr)")
    }

    /// The same after a sign-in in the same process (`exec --login`, whose sign-in ignores and then restores the
    /// signals): a SIGTERM during the refresh that follows still waits for the save, and then ends signin.
    @Test func aSignalDuringARefreshAfterASignInInTheSameProcessLosesNothing() throws {
        let strict = try Shared.strict.get()
        let box = try strict.sandbox(["rotate": true, "access_ttl": 30])
        try strict.control(box.clientID, ["refresh_delay": 1.0])
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Paths.signin)
        // --min-ttl beyond the token's life: the sign-in is followed by a refresh, in the same process.
        p.arguments = ["exec", "--login", "--min-ttl", "120", "--", "/bin/true"]
        p.environment = box.environment
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        #expect(waitFor { (try? strict.stats(box.clientID)["refreshes"] as? Int ?? 0) == 1 }, "the refresh after the sign-in reached the provider")
        kill(p.processIdentifier, SIGTERM)
        p.waitUntilExit()
        #expect(p.terminationReason == .uncaughtSignal && p.terminationStatus == SIGTERM,
                "the signal ends it after the save, not before, and not ignored: \(p.terminationReason.rawValue) \(p.terminationStatus)")
        try strict.control(box.clientID, ["refresh_delay": 0])
        let next = try box.signin("token", "--force-refresh")
        #expect(next.status == 0, "the rotated refresh token was kept: \(next.stderr)")
    }
}
