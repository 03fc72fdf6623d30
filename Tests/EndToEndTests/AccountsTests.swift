import Foundation
import Testing
@testable import SignInKit
@testable import SignInBase
@testable import SignInTransport
@testable import SignInProtocol
@testable import SignInStorage

/// Several accounts side by side: work and personal with the same provider and client, and named configurations.
@Suite struct AccountsTests {
    /// Alice and then Bob sign in with the same client; Bob is current.
    func twoAccounts(_ settings: [String: Any] = [:]) throws -> (Provider, Sandbox) {
        let strict = try Shared.strict.get()
        let box = try strict.sandbox(settings)
        #expect(try box.signin("login").status == 0)
        let bob = try box.signin("login", env: ["STANDIN_SUB": "bob"])
        #expect(bob.status == 0, "\(bob.stderr)")
        #expect(bob.stderr.contains("Already signed in as Alice Example <alice@example.org>"), "\(bob.stderr)")
        return (strict, box)
    }

    @Test func twoAccountsTokenUseAndLogout() throws {
        let (_, box) = try twoAccounts()
        #expect(try box.signin("whoami").stdout == "Bob Example <bob@example.org>\n")
        let aliceToken = try box.signin("token", "--account", "alice@example.org")
        let bobToken = try box.signin("token", "--account", "bob")  // by sub
        #expect(aliceToken.status == 0 && bobToken.status == 0)
        #expect(aliceToken.stdout != bobToken.stdout)
        #expect(try box.signin("token").stdout == bobToken.stdout, "no account named: the current one")
        #expect(try box.signin("whoami", env: ["SIGNIN_ACCOUNT": "ALICE@example.org"]).stdout == "Alice Example <alice@example.org>\n")

        let list = try box.signin("accounts")
        #expect(list.stdout.contains("  alice@example.org  Alice Example"), "\(list.stdout)")
        #expect(list.stdout.contains("* bob@example.org    Bob Example"), "\(list.stdout)")
        let json = try box.signin("accounts", "--json")
        #expect(json.stdout.contains(#""current":true"#) && json.stdout.contains(#""email":"alice@example.org""#))

        let use = try box.signin("use", "alice@example.org")
        #expect(use.stdout == "Now using Alice Example <alice@example.org>\n")
        #expect(try box.signin("whoami").stdout.contains("Alice"))

        let out = try box.signin("logout")
        #expect(out.status == 0)
        #expect(out.stdout.contains("Signed out Alice Example <alice@example.org>"), "\(out.stdout)")
        #expect(out.stdout.contains("No account is current now"), "never switch silently to another person: \(out.stdout)")
        let none = try box.signin("token")
        #expect(none.status == 3)
        #expect(none.stderr.contains("no account is current") && none.stderr.contains("bob@example.org"), "\(none.stderr)")
        #expect(try box.signin("token", "--account", "bob@example.org").stdout == bobToken.stdout)
        #expect(try box.signin("token", "--account", "alice@example.org").status == 2)

        let all = try box.signin("logout", "--all")
        #expect(all.status == 0 && all.stdout.contains("Bob Example"), "\(all.stdout)")
        #expect(try box.signin("accounts").stdout.contains("No accounts"))
        // Nothing of signin's is left behind after the last sign-out.
        #expect(!FileManager.default.fileExists(atPath: box.storeDir), "\(box.storeSnapshot().keys)")
    }

    @Test func anUnknownOrAmbiguousAccountIsAUsageErrorListingWhatIsThere() throws {
        let (strict, box) = try twoAccounts()
        let unknown = try box.signin("token", "--account", "carol@example.org")
        #expect(unknown.status == 2)
        #expect(unknown.stderr.contains("No stored account is \"carol@example.org\"") && unknown.stderr.contains("alice@example.org")
                && unknown.stderr.contains("bob@example.org"), "\(unknown.stderr)")
        // Two accounts with one e-mail (a provider that lets an address move between accounts).
        try strict.control(box.clientID, ["id_token_claims": ["email": "shared@example.org"]])
        #expect(try box.signin("login", env: ["STANDIN_SUB": "carol"]).status == 0)
        #expect(try box.signin("login", env: ["STANDIN_SUB": "dave"]).status == 0)
        let ambiguous = try box.signin("whoami", "--account", "shared@example.org")
        #expect(ambiguous.status == 2)
        #expect(ambiguous.stderr.contains("names several accounts") && ambiguous.stderr.contains("sub carol"), "\(ambiguous.stderr)")
        #expect(try box.signin("whoami", "--account", "carol").status == 0)
    }

    /// Refreshes of two accounts do not wait on each other; each account still sees one refresh for many callers.
    @Test func parallelRefreshesOfTwoAccountsOverlapAndEachMakesOne() throws {
        // Access tokens that live 30 s: inside the default 60 s margin, so every `token` call needs a refresh.
        let (strict, box) = try twoAccounts(["access_ttl": 30, "rotate": true, "refresh_delay": 0.5])
        try strict.control(box.clientID, ["access_ttl": 3600])  // the refreshed tokens are fresh
        let before = try strict.stats(box.clientID)["refreshes"] as? Int ?? 0
        let runs = try (0..<10).map { i in try ParallelRun(box, ["token", "--account", i % 2 == 0 ? "alice" : "bob"]) }
        let results = try runs.map { try $0.wait() }
        #expect(results.allSatisfy { $0.status == 0 }, "\(results.map(\.stderr))")
        #expect(Set(results.map(\.stdout)).count == 2)
        let stats = try strict.stats(box.clientID)
        #expect((stats["refreshes"] as? Int ?? 0) - before == 2)
        #expect(stats["refreshes_by_sub"] as? [String: Int] == ["alice": 1, "bob": 1], "\(stats)")

        // While Alice's refresh is held at the provider, Bob's starts and reaches the provider too: his lock is
        // his own. The hold is lifted only once both are in flight, so a slow machine cannot end Alice's first.
        try strict.control(box.clientID, ["refresh_delay": 0, "refresh_hold": true])
        let alice = try ParallelRun(box, ["token", "--force-refresh", "--account", "alice"])
        #expect(waitFor { (try? strict.stats(box.clientID)["refreshes_in_flight"] as? Int) == 1 }, "Alice's refresh reached the provider: \((try? strict.stats(box.clientID)) ?? [:])")
        let bob = try ParallelRun(box, ["token", "--force-refresh", "--account", "bob"])
        #expect(waitFor { (try? strict.stats(box.clientID)["refreshes_in_flight"] as? Int) == 2 }, "Bob's refresh did not wait for Alice's: \((try? strict.stats(box.clientID)) ?? [:])")
        try strict.control(box.clientID, ["refresh_hold": false])
        let (aliceDone, bobDone) = (try alice.wait(), try bob.wait())
        #expect(aliceDone.status == 0, "\(aliceDone.stderr)")
        #expect(bobDone.status == 0, "\(bobDone.stderr)")
    }

    /// A store from the previous version is carried over with its tokens intact, and a crash at each step of
    /// that move loses nothing.
    @Test(arguments: ["", "migrate-after-entry", "migrate-after-pointer", "store-after-temp-write"])
    func aVersion1StoreIsCarriedOverEvenThroughACrash(failpoint: String) throws {
        let strict = try Shared.strict.get()
        let box = try strict.signedInSandbox()
        let token = try box.signin("token").stdout
        try rewriteAsVersion1(box)
        if !failpoint.isEmpty {
            let crashed = try box.signin(["whoami"], env: ["SIGNIN_FAILPOINT": failpoint])
            #expect(crashed.status == 9, "killed at \(failpoint): \(crashed.stderr)")
        }
        let after = try box.signin("token")
        #expect(after.status == 0, "\(after.stderr)")
        #expect(after.stdout == token)
        #expect(try box.signin("whoami").stdout == "Alice Example <alice@example.org>\n")
        #expect(!(box.storeSnapshot().keys.contains { $0.hasSuffix(".cred") && $0.split(separator: ".").count == 2 }), "the old file is gone")
        #expect(try box.signin("token", "--force-refresh").status == 0)
    }

    /// Named configurations: `--profile NAME` and `$SIGNIN_PROFILE`, listed together by `accounts --all`.
    @Test func namedConfigurationsAndAccountsAll() throws {
        let strict = try Shared.strict.get()
        let mock = try Shared.mock.get()
        let box = try strict.sandbox()
        let dir = box.environment["XDG_CONFIG_HOME"]! + "/signin"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try JSONSerialization.data(withJSONObject: ["client_id": box.clientID, "issuer": strict.issuer]).write(to: URL(fileURLWithPath: dir + "/work.json"))
        try JSONSerialization.data(withJSONObject: ["client_id": "home", "client_secret": "s", "issuer": mock.issuer]).write(to: URL(fileURLWithPath: dir + "/home.json"))
        let env = ["SIGNIN_CONFIG": ""]
        #expect(try box.signin(["login", "--profile", "work"], env: env).status == 0)
        #expect(try box.signin(["login"], env: ["SIGNIN_CONFIG": "", "SIGNIN_PROFILE": "home"]).status == 0)
        #expect(try box.signin(["whoami", "--profile", "work"], env: env).stdout.contains("alice@example.org"))
        #expect(try box.signin(["status", "--profile", "home"], env: env).stdout.contains("Issuer: \(mock.issuer)"))
        let all = try box.signin(["accounts", "--all"], env: env)
        #expect(all.stdout.contains("home (\(mock.issuer))") && all.stdout.contains("work (\(strict.issuer))"), "\(all.stdout)")
        #expect(try box.signin(["whoami", "--profile", "nope"], env: env).status == 2)
        #expect(try box.signin(["whoami", "--profile", "../x"], env: env).status == 2)
        // the configuration in use outside the folder (the sandbox's SIGNIN_CONFIG) is listed too.
        #expect(try box.signin("login").status == 0)
        let outside = try box.signin("accounts", "--all")
        #expect(outside.stdout.contains("\(box.configPath) (\(strict.issuer))") && outside.stdout.contains("work (\(strict.issuer))"), "\(outside.stdout)")
    }

    func rewriteAsVersion1(_ box: Sandbox) throws {
        let store = CredentialStore(directory: box.storeDir)
        let c = SignInConfiguration(clientID: box.clientID, issuer: box.issuer)
        let creds = try #require(try store.current(issuer: c.issuer, clientID: c.clientID))
        let key = Array(try Data(contentsOf: URL(fileURLWithPath: box.storeDir + "/key")))
        let enc = JSONEncoder()
        enc.dateEncodingStrategy = .secondsSince1970
        let sealed = try Crypto.seal(Array(try enc.encode(creds)), key: key, aad: EntryFile.aad(version: 1, issuer: c.issuer, clientID: c.clientID))
        try Data(EntryFile(version: 1, sealed: sealed).bytes).write(to: URL(fileURLWithPath: store.legacyVersion1Path(issuer: c.issuer, clientID: c.clientID)))
        chmod(store.legacyVersion1Path(issuer: c.issuer, clientID: c.clientID), 0o600)
        for name in try FileManager.default.contentsOfDirectory(atPath: box.storeDir) where name.hasSuffix(".current") || name.split(separator: ".").count == 3 && name.hasSuffix(".cred") {
            try FileManager.default.removeItem(atPath: box.storeDir + "/" + name)
        }
    }
}
