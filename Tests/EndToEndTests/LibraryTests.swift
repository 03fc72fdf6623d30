import Foundation
import SignInKit  // the public API only, as a Swift program would use it
import Testing

/// SignInKit as a Swift program uses it: GoogleSignIn's surface against the strict provider.
@Suite struct LibraryTests {
    func client(_ box: Sandbox, provider: Provider, scopes: [String] = ["openid", "email", "profile"], env: [String: String] = [:]) throws -> SignInClient {
        var config = SignInConfiguration(clientID: box.clientID, scopes: scopes, issuer: provider.issuer)
        config.httpTimeout = .seconds(10)
        var environment = box.environment
        environment.merge(env) { $1 }
        return SignInClient(configuration: config, storeDirectory: box.storeDir, environment: environment)
    }

    @Test func signInRestoreFreshTokenAndSignOut() async throws {
        let strict = try Shared.strict.get()
        let box = try Sandbox(issuer: strict.issuer)
        let c = try client(box, provider: strict)
        #expect(!c.hasPreviousSignIn)
        await #expect(throws: SignInError.self) { try await c.restorePreviousSignIn() }

        let user = try await c.signIn()
        #expect(user.userID == "alice")
        #expect(user.profile.name == "Alice Example")
        #expect(user.profile.email == "alice@example.org")
        #expect(user.grantedScopes == ["openid", "email", "profile"])
        #expect(user.refreshToken != nil && user.idToken != nil)
        #expect(c.hasPreviousSignIn)
        #expect(c.currentUser?.profile == user.profile)

        // A second client (another process, later) restores silently.
        let later = try client(box, provider: strict)
        let restored = try await later.restorePreviousSignIn()
        #expect(restored.profile == user.profile)
        #expect(try await restored.freshAccessToken() == user.accessToken?.value)  // fresh enough: no refresh
        #expect(try strict.stats(box.clientID)["refreshes"] as? Int == 0)
        let refreshed = try await later.restorePreviousSignIn(forceRefresh: true)
        #expect(refreshed.accessToken?.value != user.accessToken?.value)

        #expect(try later.signOut())
        #expect(!later.hasPreviousSignIn)
        do {
            _ = try await later.restorePreviousSignIn()
            Issue.record("restored after sign-out")
        } catch {
            guard case .noPreviousSignIn = error else { Issue.record("wrong error \(error)"); return }
        }
    }

    @Test func addScopesAsksForTheUnionAndRefusesAnotherAccount() async throws {
        let strict = try Shared.strict.get()
        let box = try Sandbox(issuer: strict.issuer)
        let user = try await client(box, provider: strict).signIn()
        do {
            _ = try await user.addScopes(["email"])
            Issue.record("re-asked for granted scopes")
        } catch {
            guard case .scopesAlreadyGranted = error else { Issue.record("wrong error \(error)"); return }
        }

        let more = try await user.addScopes(["https://example.org/calendar"])
        #expect(more.grantedScopes.contains("https://example.org/calendar"))
        #expect(more.grantedScopes.contains("email"))
        #expect(more.userID == user.userID)

        // Another account signs in at the incremental consent: refused, nothing changed.
        let other = try client(box, provider: strict, env: ["STANDIN_SUB": "bob"])
        let current = try #require(other.currentUser)
        do {
            _ = try await current.addScopes(["https://example.org/drive"])
            Issue.record("accepted another account")
        } catch {
            guard case .mismatchWithCurrentUser = error else { Issue.record("wrong error \(error)"); return }
        }
        #expect(other.currentUser?.userID == "alice")
        #expect(other.currentUser?.grantedScopes.contains("https://example.org/drive") == false)
    }

    @Test func disconnectRevokesAtTheProvider() async throws {
        let strict = try Shared.strict.get()
        let box = try Sandbox(issuer: strict.issuer)
        let c = try client(box, provider: strict)
        _ = try await c.signIn()
        try await c.disconnect()
        #expect(!c.hasPreviousSignIn)
        #expect(try strict.stats(box.clientID)["revocations"] as? Int == 1)
    }

    @Test func cancellingTheTaskCancelsTheSignIn() async throws {
        let strict = try Shared.strict.get()
        let box = try Sandbox(issuer: strict.issuer)
        let c = try client(box, provider: strict, env: ["STANDIN_MODE": "none"])
        let waiting = Waiter()
        let c2 = SignInClient(configuration: c.configuration, storeDirectory: box.storeDir, environment: box.environment.merging(["STANDIN_MODE": "none"]) { $1 }) { event in
            if case .authorizationURL = event { waiting.signal() }
        }
        let task = Task { try await c2.signIn() }
        await waiting.wait()
        task.cancel()
        do {
            _ = try await task.value
            Issue.record("sign-in finished")
        } catch let e as SignInError {
            guard case .canceled = e else { Issue.record("wrong error \(e)"); return }
        }
    }

    static func signInThenRefresh<C: SignInClientProtocol>(_ client: C) async throws(SignInError) -> String {
        let user = try await client.signIn(options: SignInOptions(timeout: .seconds(60)))
        let refreshed = try await user.refreshTokensIfNeeded(minimumValidity: .seconds(30))
        let restored = try await client.restorePreviousSignIn(minimumValidity: .seconds(30))
        return refreshed.userID + "," + restored.userID
    }

    @Test func theProtocolsCarryWhatREADMEPromisesAndAUserIsEquatable() async throws {
        #expect(try await Self.signInThenRefresh(LibraryDiscoveryUpdatesAndRetryTests.MinimalClient()) == "42,42")
        let strict = try Shared.strict.get()
        let box = try Sandbox(issuer: strict.issuer)
        let client = LibraryDiscoveryUpdatesAndRetryTests().client(box, strict)
        #expect(try await Self.signInThenRefresh(client) == "alice,alice")
        let a = try await client.restorePreviousSignIn()
        let b = try await client.restorePreviousSignIn()
        #expect(a == b, "the same stored sign-in read twice")
        let c = try await client.restorePreviousSignIn(forceRefresh: true)
        #expect(a != c, "a refresh changes the user")
    }

    @Test func disconnectSignsOutOnlyOnceTheProviderRevoked() async throws {
        let strict = try Shared.strict.get()
        let box = try Sandbox(issuer: strict.issuer)
        let client = LibraryDiscoveryUpdatesAndRetryTests().client(box, strict)
        _ = try await client.signIn()
        try strict.control(box.clientID, ["revoke_fault": "503"])
        let failure: SignInError? = await { () async -> SignInError? in
            do throws(SignInError) { try await client.disconnect(); return nil } catch { return error }
        }()
        guard case .revocationFailed? = failure else { Issue.record("\(String(describing: failure))"); return }
        #expect(client.currentUser != nil, "a failed revocation signed the user out")
        try strict.control(box.clientID, ["revoke_fault": NSNull()])
        try await client.disconnect()
        #expect(client.currentUser == nil)
        #expect(try strict.stats(box.clientID)["revocations"] as? Int ?? 0 >= 1)
    }
}
