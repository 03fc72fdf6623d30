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
