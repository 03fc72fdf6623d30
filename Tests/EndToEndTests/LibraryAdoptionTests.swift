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
            case .noPreviousSignIn(let reason): #expect(reason.contains("nothing stored"))
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
        #expect(info["sub"] == "alice" && info["email"] == "alice@example.org")
    }

    @Test func aProgramNamedStoreIsItsOwn() async throws {
        let strict = try Shared.strict.get()
        let box = try Sandbox(issuer: strict.issuer)
        let client = SignInClient(configuration: config(box, strict), environment: box.environment, appName: "my-app")
        _ = try await client.signIn()
        let data = box.environment["XDG_DATA_HOME"]!
        #expect(FileManager.default.fileExists(atPath: data + "/my-app"))
        #expect(!FileManager.default.fileExists(atPath: data + "/signin"), "the signin command's store is untouched")
        #expect(client.store.directory == data + "/my-app")
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

    @Test func profileNamesAndPictures() {
        let p = SignInProfile(userID: "1", name: "Alice Example", email: "alice@example.org", picture: "https://lh3.googleusercontent.com/a/abc=s96-c")
        #expect(p.fullName == "Alice Example")
        #expect(p.displayName == "Alice Example <alice@example.org>")
        #expect(p.imageURL(dimension: 256)?.absoluteString == "https://lh3.googleusercontent.com/a/abc=s256-c")
        #expect(SignInProfile(userID: "2", picture: "https://idp.example/me.png").imageURL(dimension: 64)?.absoluteString == "https://idp.example/me.png")
        #expect(SignInProfile(userID: "3", picture: "javascript:alert(1)").imageURL(dimension: 64) == nil)
        #expect(SignInProfile(userID: "3", email: "x@example.org").fullName == nil)
    }
}
