import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import SignInKit  // the public API only, as a program that adopts the library would use it
import Testing

/// What a Swift program needs beyond GoogleSignIn's surface: errors it can switch on, a token for its own HTTP
/// requests, its own store, progress it can iterate, and the current user it can watch.
@Suite struct LibraryAdoptionTests {
    func config(_ box: Sandbox, _ provider: Provider) -> SignInConfiguration {
        var c = SignInConfiguration(clientID: box.clientID, issuer: provider.issuer)
        c.httpTimeout = .seconds(10)
        return c
    }

    @Test func errorsAreTypedAndLocalized() async throws {
        let strict = try Shared.strict.get()
        let box = try Sandbox(issuer: strict.issuer)
        let client = SignInClient(configuration: config(box, strict), storeDirectory: box.storeDir, environment: box.environment)
        do {
            _ = try await client.restorePreviousSignIn()
            Issue.record("restored with nothing stored")
        } catch {
            // `error` is a SignInError (typed throws): a switch needs no cast.
            switch error {
            case .noPreviousSignIn(let reason): #expect(reason == .nothingStored(issuer: strict.issuer), "\(reason)")
            default: Issue.record("\(error)")
            }
            #expect((error as any Error).localizedDescription == error.description)
        }
    }

    @Test func anAuthorizedRequestToTheUserinfoEndpoint() async throws {
        let strict = try Shared.strict.get()
        let box = try Sandbox(issuer: strict.issuer)
        let client = SignInClient(configuration: config(box, strict), storeDirectory: box.storeDir, environment: box.environment)
        let user = try await client.signIn()
        let token = try await user.freshToken()
        #expect(token.expirationDate != nil && !token.description.contains(token.value), "a token prints without its value")
        var request = URLRequest(url: URL(string: strict.issuer + "/userinfo")!)
        request.setValue(try await user.authorizationHeaderValue(), forHTTPHeaderField: "Authorization")
        let (data, response) = try await URLSession.shared.data(for: request)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(String(decoding: data, as: UTF8.self).contains(#""sub": "alice""#) || String(decoding: data, as: UTF8.self).contains(#""sub":"alice""#))
        let info = try await user.userInfo()
        #expect(info["sub"]?.string == "alice" && info["email"]?.string == "alice@example.org")
    }

    @Test func aProgramNamedStoreIsItsOwn() async throws {
        let strict = try Shared.strict.get()
        let box = try Sandbox(issuer: strict.issuer)
        let client = SignInClient(configuration: config(box, strict), environment: box.environment, appName: "my-app")
        _ = try await client.signIn()
        let data = box.environment["XDG_DATA_HOME"]!
        #expect(FileManager.default.fileExists(atPath: data + "/my-app"))
        #expect(!FileManager.default.fileExists(atPath: data + "/signin"), "the signin command's store is untouched")
        #expect(client.credentialStore?.directory == data + "/my-app")
    }

    @Test func theEventsOfASignInArriveInOrderAndTheCurrentUserCanBeWatched() async throws {
        let strict = try Shared.strict.get()
        let box = try Sandbox(issuer: strict.issuer)
        let client = SignInClient(configuration: config(box, strict), storeDirectory: box.storeDir, environment: box.environment)
        var updates = client.currentUserUpdates().makeAsyncIterator()
        let first = await updates.next()
        #expect(first != nil && first! == nil, "no one is signed in at first")
        let (events, signIn) = client.signInWithEvents()
        var names: [String] = []
        for await event in events {
            switch event {
            case .authorizationURL: names.append("authorizationURL")
            case .exchangingCode: names.append("exchangingCode")
            default: names.append("other")
            }
        }
        let user = try await signIn.value
        #expect(names == ["authorizationURL", "exchangingCode"])
        let announced = await updates.next()
        #expect(announced??.userID == user.userID, "the sign-in was announced")
        #expect(try client.signOut())
        let last = await updates.next()
        #expect(last != nil && last! == nil, "and the sign-out")
    }

    @Test func endpointsSetInCodeFollowTheSameRulesAsTheFile() async throws {
        var c = SignInConfiguration(clientID: "in-code", issuer: "https://idp.example")
        c.endpoints.authorizationEndpoint = URL(string: "https://idp.example/auth")
        c.endpoints.tokenEndpoint = URL(string: "http://tokens.example/token")  // plain http to another machine
        c.endpoints.jwksURI = URL(string: "https://idp.example/jwks")
        do {
            _ = try await SignInClient(configuration: c, storage: InMemoryCredentialStorage(), environment: [:]).discoverEndpoints()
            Issue.record("a plain-http token endpoint on another machine was accepted")
        } catch {
            guard case .configInvalid(_, let field, let reason) = error else { Issue.record("\(error)"); return }
            #expect(field == "token_endpoint" && reason.contains("not https"))
        }
        c.endpoints.tokenEndpoint = URL(string: "https://idp.example/token")
        let e = try await SignInClient(configuration: c, storage: InMemoryCredentialStorage(), environment: [:]).discoverEndpoints()
        #expect(e.tokenEndpoint.absoluteString == "https://idp.example/token" && e.jwksURI.host == "idp.example")
    }

    @Test func profileNamesAndPictures() {
        let p = SignInProfile(userID: "1", name: "Alice Example", email: "alice@example.org", picture: "https://lh3.googleusercontent.com/a/abc=s96-c")
        #expect(p.fullName == "Alice Example")
        #expect(p.displayName == "Alice Example <alice@example.org>")
        #expect(p.imageURL(dimension: 256)?.absoluteString == "https://lh3.googleusercontent.com/a/abc=s256-c")
        #expect(SignInProfile(userID: "2", picture: "https://idp.example/me.png").imageURL(dimension: 64)?.absoluteString == "https://idp.example/me.png")
        #expect(SignInProfile(userID: "3", picture: "javascript:alert(1)").imageURL(dimension: 64) == nil)
        #expect(SignInProfile(userID: "3", email: "x@example.org").fullName == nil)
    }

    /// A program's own code, written against the protocols: the real client in the program, a stand-in in its tests.
    static func greeting(_ client: some SignInClientProtocol) async throws(SignInError) -> String {
        let user = client.hasPreviousSignIn ? try await client.restorePreviousSignIn() : try await client.signIn()
        let header = try await user.authorizationHeaderValue()
        return "Hello, \(user.profile.fullName ?? "you") (\(header.hasPrefix("Bearer ") ? "authorized" : "not authorized"))"
    }

    struct StandInUser: SignInUserProtocol {
        var profile = SignInProfile(userID: "42", name: "Stand In")
        var grantedScopes = ["openid"]
        func freshToken(minimumValidity: Duration) async throws(SignInError) -> SignInToken {
            SignInToken(value: "fake", expirationDate: nil)
        }
        func userInfo() async throws(SignInError) -> [String: JSONValue] { ["sub": .string("42")] }
    }

    final class StandInClient: SignInClientProtocol, @unchecked Sendable {
        var signedIn = false
        var hasPreviousSignIn: Bool { signedIn }
        var currentUser: StandInUser? { signedIn ? StandInUser() : nil }
        func restorePreviousSignIn(account: String?, minimumValidity: Duration, forceRefresh: Bool, token: TokenKind) async throws(SignInError) -> StandInUser {
            guard signedIn else { throw .noPreviousSignIn(reason: .nothingStored(issuer: "stand-in")) }
            return StandInUser()
        }
        func signIn(hint: String?, additionalScopes: [String], options: SignInOptions) async throws(SignInError) -> StandInUser {
            signedIn = true
            return StandInUser()
        }
        func signOut() throws(SignInError) -> Bool { defer { signedIn = false }; return signedIn }
        func disconnect(account: String?) async throws(SignInError) { signedIn = false }
    }

    @Test func aProgramsCodeRunsAgainstAStandInAndAgainstTheRealClient() async throws {
        let fake = StandInClient()
        #expect(try await Self.greeting(fake) == "Hello, Stand In (authorized)")
        #expect(fake.signedIn)

        let strict = try Shared.strict.get()
        let box = try Sandbox(issuer: strict.issuer)
        let real = SignInClient(configuration: config(box, strict), storage: InMemoryCredentialStorage(), environment: box.environment)
        #expect(try await Self.greeting(real) == "Hello, Alice Example (authorized)")
        #expect(try await Self.greeting(real) == "Hello, Alice Example (authorized)", "the second time restores")
    }

    @Test func inMemoryStorageKeepsTheSignInAndNothingOnDisk() async throws {
        let strict = try Shared.strict.get()
        let box = try Sandbox(issuer: strict.issuer)
        let storage = InMemoryCredentialStorage()
        let client = SignInClient(configuration: config(box, strict), storage: storage, environment: box.environment)
        #expect(!client.hasPreviousSignIn)
        let user = try await client.signIn()
        #expect(storage.storedCredentials.map(\.profile.userID) == ["alice"])
        #expect(client.hasPreviousSignIn && client.currentUser?.userID == "alice")
        let refreshed = try await client.restorePreviousSignIn(account: nil, minimumValidity: .seconds(60), forceRefresh: true, token: .access)
        #expect(refreshed.accessToken != user.accessToken, "a refresh through the provider")
        #expect(storage.storedCredentials.first?.accessToken == refreshed.accessToken?.value, "saved in memory")
        #expect(client.credentialStore == nil)
        #expect(!FileManager.default.fileExists(atPath: box.storeDir), "nothing written to the store folder")
        #expect(!FileManager.default.fileExists(atPath: box.environment["XDG_DATA_HOME"]! + "/signin"))
        #expect(try client.signOut())
        #expect(storage.storedCredentials.isEmpty && !client.hasPreviousSignIn)
    }

    @Test func seededCredentialsRestoreWithoutAProvider() async throws {
        // A program's test needs no provider at all: nothing listens at these endpoints (the port refuses).
        let down = try SilentServer(listening: false)
        let endpoints = ProviderEndpoints(issuer: down.url, authorizationEndpoint: URL(string: down.url + "/auth")!,
                                          tokenEndpoint: URL(string: down.url + "/token")!, jwksURI: URL(string: down.url + "/jwks")!)
        let seeded = StoredCredentials(issuer: down.url, clientID: "test-client", refreshToken: "rt", accessToken: "at-fresh",
                                       accessTokenExpiry: Date(timeIntervalSinceNow: 3600), idToken: nil, idTokenExpiry: nil,
                                       profile: SignInProfile(userID: "7", name: "Seeded", email: "seeded@example.org"),
                                       grantedScopes: ["openid"], endpoints: endpoints)
        let client = SignInClient(configuration: SignInConfiguration(clientID: "test-client", issuer: down.url),
                                  storage: InMemoryCredentialStorage([seeded]), environment: [:])
        let user = try await client.restorePreviousSignIn()
        #expect(user.profile.email == "seeded@example.org")
        #expect(try await user.freshToken().value == "at-fresh")
        do {
            _ = try await user.freshToken(minimumValidity: .seconds(7200))
            Issue.record("a token valid for two hours was handed out from one valid for one")
        } catch {
            switch error {
            case .networkUnavailable: break  // it tried to refresh at the provider, which is down
            default: Issue.record("\(error)")
            }
        }
    }
}
