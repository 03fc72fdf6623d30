import Foundation
import Testing

/// A signal at the worst moment (a rotating refresh in flight) waits for the save, then acts.
@Suite struct SignalHoldingTests {
    /// Runs signin with `args` in `box`, sends `sig` once the provider has its refresh request (it has rotated;
    /// its answer is held until the signal is sent), and checks that the signal ended signin only after the save: the rotated
    /// refresh token was kept, so the next refresh works.
    func signalDuringRefresh(_ strict: Provider, _ box: Sandbox, _ args: [String], _ sig: Int32) throws {
        try strict.control(box.clientID, ["refresh_hold": true])
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Paths.signin)
        p.arguments = args
        p.environment = box.environment
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        #expect(waitFor { (try? strict.stats(box.clientID)["refreshes"] as? Int ?? 0) == 1 }, "the refresh reached the provider")
        kill(p.processIdentifier, sig)
        try strict.control(box.clientID, ["refresh_hold": false])
        p.waitUntilExit()
        #expect(p.terminationReason == .uncaughtSignal && p.terminationStatus == sig,
                "the signal still ends it, after the save, and is not ignored: \(p.terminationReason.rawValue) \(p.terminationStatus)")
        let next = try box.signin("token", "--force-refresh")
        #expect(next.status == 0, "the rotated refresh token was kept: \(next.stderr)")
    }

    /// A signal that arrives while a rotating refresh is in flight waits until the new refresh token is saved.
    @Test(arguments: [SIGTERM, SIGHUP, SIGINT]) func aSignalDuringARotatingRefreshLosesNothing(sig: Int32) throws {
        let strict = try Shared.strict.get()
        try signalDuringRefresh(strict, try strict.signedInSandbox(["rotate": true]), ["token", "--force-refresh"], sig)
    }

    /// The same after a sign-in in the same process (`exec --login`, whose sign-in ignores and then restores the
    /// signals): a SIGTERM during the refresh that follows still waits for the save, and then ends signin.
    @Test func aSignalDuringARefreshAfterASignInInTheSameProcessLosesNothing() throws {
        let strict = try Shared.strict.get()
        // --min-ttl beyond the token's life: the sign-in is followed by a refresh, in the same process.
        try signalDuringRefresh(strict, try strict.sandbox(["rotate": true, "access_ttl": 30]), ["exec", "--login", "--min-ttl", "120", "--", "/bin/true"], SIGTERM)
    }

    /// Fifth review, item 11: in an async program (the refresh on a thread started from the cooperative pool, whose
    /// threads block every signal) `SignalHolding.install()` holds SIGINT until the rotated token is saved, then acts
    /// on it: the program ends by SIGINT, not by finishing as if nothing had come (before: exit 0, the signal lost).
    @Test func anAsyncLibraryProgramActsOnAHeldSignalAfterTheSave() throws {
        let strict = try Shared.strict.get()
        let box = try strict.signedInSandbox(["rotate": true])
        try strict.control(box.clientID, ["refresh_hold": true])
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Paths.built("signin-test-worker"))
        p.environment = box.environment.merging(["WORKER_CLIENT_ID": box.clientID, "WORKER_ISSUER": strict.issuer, "WORKER_STORE": box.storeDir]) { $1 }
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        #expect(waitFor { (try? strict.stats(box.clientID)["refreshes"] as? Int ?? 0) == 1 }, "the refresh reached the provider")
        kill(p.processIdentifier, SIGINT)
        try strict.control(box.clientID, ["refresh_hold": false])
        p.waitUntilExit()
        let printed = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(p.terminationReason == .uncaughtSignal && p.terminationStatus == SIGINT,
                "SIGINT acted on after the save: \(p.terminationReason.rawValue) \(p.terminationStatus) \(printed)")
        let next = try box.signin("token", "--force-refresh")
        #expect(next.status == 0, "the rotated refresh token was kept: \(next.stderr)")
    }
}
