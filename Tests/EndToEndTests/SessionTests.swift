import Foundation
import Testing

/// restore, whoami, token, status and logout: the silent half of Google Sign-In.
@Suite struct SessionTests {
    @Test func commandsWithoutASignInExit3() throws {
        let strict = try Shared.strict.get()
        let box = try Sandbox(issuer: strict.issuer)
        for cmd in ["restore", "whoami", "token", "status"] {
            let r = try box.signin(cmd)
            #expect(r.status == 3, "\(cmd)")
        }
    }

    @Test func cachedCommandsAnswerWithTheProviderStopped() throws {
        let mock = try Provider(script: "mock_provider.py")
        let box = try mock.signedInSandbox(secret: "s")
        let token = try box.signin("token").stdout
        mock.stop()
        let again = try box.signin("token")
        #expect(again.status == 0)
        #expect(again.stdout == token)
        let who = try box.signin("whoami")
        #expect(who.stdout == "Alice Example <alice@example.org>\n")
        let restore = try box.signin("restore")
        #expect(restore.status == 0)
        #expect(restore.stdout.contains("Alice Example"))
        let json = try box.signin("whoami", "--json")
        #expect(json.stdout.contains(#""sub":"alice""#))
        let status = try box.signin("status")
        #expect(status.stdout.contains("Granted scopes: openid email profile"))
        // But a refresh needs the provider: exit 5, nothing lost.
        let before = box.storeSnapshot()
        let forced = try box.signin("token", "--force-refresh")
        #expect(forced.status == 5, "\(forced.stderr)")
        #expect(box.storeSnapshot() == before)
        #expect(try box.signin("token").stdout == token)
    }

    @Test func refreshAgainstMockUsesBasicAuthAndKeepsProfile() throws {
        let mock = try Shared.mock.get()
        let box = try mock.signedInSandbox(secret: "s")
        let old = try box.signin("token").stdout
        let r = try box.signin("restore", "--force-refresh")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == "Signed in as Alice Example <alice@example.org>\n")  // no id_token on refresh: profile kept
        #expect(try box.signin("token").stdout != old)
    }

    @Test func forcedRefreshRotatesAndTheRotatedTokenIsStored() throws {
        let strict = try Shared.strict.get()
        let box = try strict.signedInSandbox(["rotate": true, "id_token_on_refresh": true])
        let first = try box.signin("token").stdout
        let r1 = try box.signin("token", "--force-refresh")
        #expect(r1.status == 0, "\(r1.stderr)")
        #expect(r1.stdout != first)
        // The old refresh token is dead at the provider; a second refresh works only if the rotated one was saved.
        let r2 = try box.signin("token", "--force-refresh")
        #expect(r2.status == 0, "\(r2.stderr)")
        #expect(try strict.stats(box.clientID)["refreshes"] as? Int == 2)
    }

    @Test func refreshedIDTokenForAnotherAccountIsRefused() throws {
        let strict = try Shared.strict.get()
        let box = try strict.signedInSandbox(["id_token_on_refresh": true, "rotate": true])
        try strict.control(box.clientID, ["refresh_sub": "mallory"])
        let r = try box.signin("restore", "--force-refresh")
        #expect(r.status == 5)
        #expect(r.stderr.contains("another account"))
        #expect(try box.signin("whoami").stdout.contains("Alice"))
        // The provider rotated the refresh token before the bad ID token was refused: the new one was kept,
        // so once the provider behaves the next refresh works.
        try strict.control(box.clientID, ["refresh_sub": "alice"])
        let again = try box.signin("restore", "--force-refresh")
        #expect(again.status == 0, "\(again.stderr)")
    }

    @Test func tenParallelTokenCallsShareOneRefresh() throws {
        let strict = try Shared.strict.get()
        // The login's access token lives 30 s: inside `token`'s default 60 s margin, so it needs a refresh.
        let box = try strict.signedInSandbox(["rotate": true, "access_ttl": 30])
        try strict.control(box.clientID, ["access_ttl": 3600])
        let results = try (0..<10).map { _ in try ParallelRun(box, ["token"]) }.map { try $0.wait() }
        for r in results { #expect(r.status == 0, "\(r.stderr)") }
        #expect(Set(results.map(\.stdout)).count == 1)
        #expect(try strict.stats(box.clientID)["refreshes"] as? Int == 1)
    }

    @Test func providerDownExits5WithStoreUntouched() throws {
        let strict = try Shared.strict.get()
        let box = try strict.signedInSandbox()
        let before = box.storeSnapshot()
        try strict.control(box.clientID, ["token_fault": "503"])
        let r = try box.signin("restore", "--force-refresh")
        #expect(r.status == 5, "\(r.stderr)")
        #expect(box.storeSnapshot() == before)
    }

    /// A token answer that names an error beside an access token (HTTP 200, as GitHub-style servers answer errors) is
    /// an error: nothing printed, nothing kept.
    @Test func anAnswerNamingAnErrorBesideATokenIsAnError() throws {
        let strict = try Shared.strict.get()
        let box = try strict.signedInSandbox()
        let before = box.storeSnapshot()
        try strict.control(box.clientID, ["token_fault": "error_beside_token"])
        let r = try box.signin("token", "--force-refresh")
        #expect(r.status != 0 && r.stdout.isEmpty, "\(r.stdout) \(r.stderr)")
        #expect(r.stderr.contains("bad_verification_code"), "\(r.stderr)")
        #expect(box.storeSnapshot() == before, "nothing of the answer kept")
    }

    /// After the provider refuses the grant, signin remembers it: no command pretends to be signed in, no request
    /// is repeated, nothing is deleted until the person signs in again.
    @Test(arguments: ["invalid_grant", "empty400"]) func aGrantTheProviderEndedIsRememberedAndNotRetried(fault: String) throws {
        let strict = try Shared.strict.get()
        let box = try strict.signedInSandbox()
        try strict.control(box.clientID, ["token_fault": fault])
        var r = try box.signin("token", "--force-refresh")
        #expect(r.status == 3, "\(r.stderr)")
        #expect(r.stderr.contains("the provider ended this sign-in on"), "\(r.stderr)")
        let requests = try strict.stats(box.clientID)["token_requests"] as? Int
        for args in [["token"], ["token", "--force-refresh"], ["restore"]] {
            r = try box.signin(args)
            #expect(r.status == 3, "\(args) \(r.stderr)")
            #expect(r.stdout.isEmpty, "\(args): no token handed out")
        }
        #expect(try strict.stats(box.clientID)["token_requests"] as? Int == requests, "no request after the refusal")
        r = try box.signin("whoami")
        #expect(r.status == 3)
        #expect(r.stderr.contains("the provider ended this sign-in on"))
        r = try box.signin("status")
        #expect(r.status == 3)
        #expect(r.stdout.contains("The provider ended this sign-in on"), "\(r.stdout)")
        r = try box.signin("status", "--json")
        #expect(r.stdout.contains(#""signed_in":false"#) && r.stdout.contains("grant_ended_at"), "\(r.stdout)")
        #expect(box.entryFile() != nil, "nothing deleted")
        // Signing in again replaces it.
        try strict.control(box.clientID, ["token_fault": NSNull()])
        let again = try box.signin("login")
        #expect(again.status == 0)
        #expect(again.stderr.contains("The provider ended the sign-in of Alice Example") && !again.stderr.contains("Already signed in"), "login says what whoami says: \(again.stderr)")
        #expect(try box.signin("token", "--force-refresh").status == 0)
    }

    @Test func logoutRevokeKillsTheGrantAtTheProvider() throws {
        let strict = try Shared.strict.get()
        let box = try strict.signedInSandbox()
        let saved = box.storeSnapshot()
        let r = try box.signin("logout", "--revoke")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try box.signin("restore").status == 3)
        #expect(try strict.stats(box.clientID)["revocations"] as? Int == 1)
        // Put the old files back: the provider refuses the revoked refresh token, so restore still exits 3.
        try FileManager.default.createDirectory(atPath: box.storeDir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        for (name, bytes) in saved {
            try bytes.write(to: URL(fileURLWithPath: box.storeDir + "/" + name))
            chmod(box.storeDir + "/" + name, 0o600)
        }
        let again = try box.signin("restore", "--force-refresh")
        #expect(again.status == 3, "\(again.stderr)")
    }

    @Test func failedRevocationStillWipesLocally() throws {
        let strict = try Shared.strict.get()
        let box = try strict.signedInSandbox()
        try strict.control(box.clientID, ["revoke_fault": "503"])
        let r = try box.signin("logout", "--revoke")
        #expect(r.status == 5, "\(r.stderr)")
        #expect(r.stderr.contains("here, but revoking the grant at the provider failed"))
        #expect(box.entryFile() == nil)
        #expect(try box.signin("whoami").status == 3)
    }

    @Test func plainLogoutRemovesLocalCredentialsOnly() throws {
        let strict = try Shared.strict.get()
        let box = try strict.signedInSandbox()
        #expect(try box.signin("logout").status == 0)
        #expect(try box.signin("status").status == 3)
        #expect(try strict.stats(box.clientID)["revocations"] as? Int == 0)
    }

    /// a provider's 429 says how long it asked to wait (exit 5, nothing changed).
    @Test func aRateLimitedRefreshSaysRetryAfter() throws {
        let strict = try Shared.strict.get()
        let box = try strict.signedInSandbox()
        let before = box.storeSnapshot()
        try strict.control(box.clientID, ["token_fault": "429", "retry_after": 120])
        let r = try box.signin("token", "--force-refresh")
        #expect(r.status == 5, "\(r.stderr)")
        #expect(r.stderr.contains("\(strict.issuer)/token") && r.stderr.contains("wait 120 s (Retry-After)"), "\(r.stderr)")
        #expect(box.storeSnapshot() == before)
        try strict.control(box.clientID, ["token_fault": NSNull(), "retry_after": NSNull()])
    }
}
