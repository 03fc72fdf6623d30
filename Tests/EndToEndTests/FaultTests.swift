import Foundation
import Testing

/// Faults: crashes mid-write, a full disk, slow, failing and vanishing providers, clock skew, and a soak.
/// Nothing stored may be lost, and every failure is bounded and clear.
@Suite struct FaultTests {
    func signedIn(_ settings: [String: Any] = [:], extra: [String: Any] = [:]) throws -> (Provider, Sandbox) {
        let strict = try Shared.strict.get()
        return (strict, try strict.signedInSandbox(settings, extra: extra))
    }

    @Test(arguments: ["store-after-temp-write", "store-after-fsync", "store-after-rename"])
    func killedDuringAStoreWriteLeavesOldOrNewCredentials(point: String) throws {
        let (_, box) = try signedIn(["rotate": false])
        let old = try box.signin("token").stdout
        let crashed = try box.signin(["token", "--force-refresh"], env: ["SIGNIN_FAILPOINT": point])
        #expect(crashed.status == 9)  // killed by SIGKILL at that point
        let after = try box.signin("token")
        #expect(after.status == 0, "\(after.stderr)")
        if point == "store-after-rename" {
            #expect(after.stdout != old)  // the new credentials landed
        } else {
            #expect(after.stdout == old)  // the old ones are intact
        }
        #expect(try box.signin("whoami").status == 0)
        // The next successful write clears what the killed writer left behind.
        #expect(try box.signin("token", "--force-refresh").status == 0)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: box.storeDir).filter { $0.contains(".tmp-") }
        #expect(leftovers.isEmpty, "\(leftovers)")
    }

    @Test func diskFullIsAClearErrorAndKeepsTheOldCredentials() throws {
        let (_, box) = try signedIn(["rotate": false])
        let before = box.storeSnapshot()
        // A file size limit of one block makes the store write fail as on a full disk (root ignores permissions).
        // Only signin runs under the limit; its output goes through a pipe, which the limit does not touch.
        let r = try Subprocess.run("/bin/sh", ["-c", "(ulimit -f 1; \"$0\" token --force-refresh; echo \"exit=$?\") 2>&1 | cat", Paths.signin],
                                   env: box.environment.filter { !$0.value.isEmpty })
        #expect(r.stdout.contains("exit=1"), "\(r.stdout)")
        #expect(r.stdout.contains("Cannot write the credential store"))
        #expect(r.stdout.contains("previous credentials are intact"))
        #expect(box.storeSnapshot() == before)
        #expect(try box.signin("whoami").status == 0)
    }

    @Test(arguments: ["slow", "429", "503", "drop", "garbage"])
    func providerFaultsAtRefreshAreBoundedExit5AndLoseNothing(fault: String) throws {
        let (strict, box) = try signedIn(["rotate": true, "slow_seconds": 20], extra: ["http_timeout": 2])
        let before = box.storeSnapshot()
        try strict.control(box.clientID, ["token_fault": fault])
        let start = Date()
        let r = try box.signin("restore", "--force-refresh")
        #expect(r.status == 5, "\(r.stderr)")
        #expect(Date().timeIntervalSince(start) < 15, "a slow provider must not hold signin for long")
        #expect(r.stderr.contains("\(strict.issuer)/token"))
        #expect(box.storeSnapshot() == before)
        try strict.control(box.clientID, ["token_fault": NSNull()])
        #expect(try box.signin("restore", "--force-refresh").status == 0)
    }

    @Test func providerDownAtLoginAndRevoke() throws {
        let mock = try Provider(script: "strict_provider.py")
        let box = try Sandbox(issuer: mock.issuer)
        #expect(try box.signin("login").status == 0)
        mock.stop()
        let revoke = try box.signin("logout", "--revoke")
        #expect(revoke.status == 5, "\(revoke.stderr)")
        #expect(revoke.stderr.contains("Could not reach"))
        #expect(box.entryFile() == nil)  // still wiped locally, as documented
        let login = try box.signin("login")
        #expect(login.status == 5, "\(login.stderr)")
        #expect(login.stderr.contains("discovery document"))
    }

    /// A provider with no revocation endpoint in its discovery document, down at `logout --revoke`: it could not be
    /// reached (exit 5, a network message, the local credentials removed as for any failed revocation), not "no
    /// revocation endpoint"; up, it is refused before any question is asked on a terminal.
    @Test func revokeWithTheProviderDownIsANetworkFailureAndNoEndpointIsRefusedBeforeAsking() throws {
        let mock = try Provider(script: "mock_provider.py")
        let box = try Sandbox(issuer: mock.issuer, secret: "s")
        #expect(try box.signin("login").status == 0)
        let asked = try Subprocess.run("/bin/sh", ["-c", "printf 'y\\n' | script -qec '\(Paths.signin) logout --revoke' /dev/null"], env: box.environment)
        #expect(!asked.stdout.contains("Sign out") && asked.stdout.contains("no revocation endpoint"), "refused before asking: \(asked.stdout)")
        #expect(box.entryFile() != nil)
        mock.stop()
        let revoke = try box.signin("logout", "--revoke")
        #expect(revoke.status == 5 && revoke.stderr.contains("Could not reach") && !revoke.stderr.contains("no revocation endpoint"), "\(revoke.status) \(revoke.stderr)")
        #expect(box.entryFile() == nil)
    }

    @Test func slowRevocationIsBoundedAndStillWipes() throws {
        let (strict, box) = try signedIn(["slow_seconds": 20], extra: ["http_timeout": 2])
        try strict.control(box.clientID, ["revoke_fault": "slow"])
        let r = try box.signin("logout", "--revoke")
        #expect(r.status == 5, "\(r.stderr)")
        #expect(box.entryFile() == nil)
    }

    @Test func smallClockSkewIsTolerated() throws {
        let (_, box) = try signedIn(["clock_offset": 120])
        #expect(try box.signin("whoami").status == 0)
    }

    @Test func soakOfAThousandTokenCallsWithRefreshesAndSeveralProcesses() throws {
        let (strict, box) = try signedIn(["rotate": true])
        let workers = 4, perWorker = 250
        let failures = ResultList()
        DispatchQueue.concurrentPerform(iterations: workers) { w in
            for i in 0..<perWorker {
                let args = i % 10 == w ? ["token", "--force-refresh"] : ["token"]
                do {
                    let r = try box.signin(args)
                    if r.status != 0 || r.stdout.count < 10 { failures.append("worker \(w) call \(i): \(r.status) \(r.stderr)") }
                } catch { failures.append("\(error)") }
            }
        }
        #expect(failures.items.isEmpty, "\(failures.items.prefix(3))")
        let refreshes = try strict.stats(box.clientID)["refreshes"] as? Int ?? 0
        #expect(refreshes >= workers * perWorker / 10 / 2)
        #expect(try box.signin("whoami").status == 0)
    }
}

final class ResultList: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [String] = []
    func append(_ s: String) { lock.lock(); list.append(s); lock.unlock() }
    var items: [String] { lock.lock(); defer { lock.unlock() }; return list }
}
