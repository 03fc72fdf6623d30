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
}
