import Foundation
import SignInKit  // the public API only, as an adopting program sees it
import Testing

/// What the third adopter (issue 41) tripped on, through the public API only.
@Suite struct AdopterThirdTrialTests {
    func client(_ box: Sandbox, _ provider: Provider) -> SignInClient {
        var c = SignInConfiguration(clientID: box.clientID, issuer: provider.issuer)
        c.httpTimeout = .seconds(20)
        return SignInClient(configuration: c, storeDirectory: box.storeDir, environment: box.environment)
    }

    /// Item 7: a user signed out by another process is `.noPreviousSignIn(.signedOutMeanwhile)` from `freshToken()`,
    /// the answer docs/library.md lists, not `.accountNotFound`.
    @Test func aSignOutByAnotherProcessIsSignedOutMeanwhile() async throws {
        let strict = try Shared.strict.get()
        let box = try strict.signedInSandbox()
        let user = try await client(box, strict).restorePreviousSignIn()
        #expect(try box.signin("logout").status == 0)
        do {
            _ = try await user.freshToken(minimumValidity: .seconds(7200))
            Issue.record("a token for a user signed out elsewhere")
        } catch {
            guard case .noPreviousSignIn(.signedOutMeanwhile) = error else { Issue.record("\(error)"); return }
        }
    }

    /// Item 6: a DPoP-bound user's single header value is refused with a pointer to the two headers it needs;
    /// `authorizationHeaders(method:url:)` gives them.
    @Test func aDPoPBoundUsersHeaderValueIsRefusedAndTheTwoHeadersAreGiven() async throws {
        let p = try DPoPTests.offered.get()
        let box = try p.signedInSandbox()
        let user = try await client(box, p).restorePreviousSignIn()
        #expect(user.accessTokenType == "DPoP")
        do {
            _ = try await user.authorizationHeaderValue()
            Issue.record("a bearer header for a DPoP-bound token")
        } catch {
            guard case .unsupported(let reason) = error else { Issue.record("\(error)"); return }
            #expect(reason.contains("authorizationHeaders(method:url:)"))
        }
        let headers = try await user.authorizationHeaders(method: "GET", url: URL(string: p.issuer + "/userinfo")!)
        #expect(headers["Authorization"]?.hasPrefix("DPoP ") == true && headers["DPoP"] != nil, "\(headers.keys)")
    }

    /// Item 9: generic code over the protocols compiles as the page writes it (this test compiling is the check;
    /// running it shows the defaults answer).
    @Test func genericCodeUsesTheDefaults() async throws {
        struct User: SignInUserProtocol {
            var profile = SignInProfile(userID: "42", name: "Stand In")
            var grantedScopes = ["openid"]
            func freshToken(minimumValidity: Duration) async throws(SignInError) -> SignInToken { SignInToken(value: "t", expirationDate: nil) }
            func userInfo() async throws(SignInError) -> [String: JSONValue] { [:] }
        }
        func refreshed<U: SignInUserProtocol>(_ u: U) async throws(SignInError) -> U { try await u.refreshTokensIfNeeded() }
        func issuer<C: SignInClientProtocol>(_ c: C) -> String { c.configuration.issuer }
        let u = try await refreshed(User())
        #expect(u.userID == "42" && u.accessTokenType == "Bearer")
        #expect(try await u.authorizationHeaderValue() == "Bearer t")
        let strict = try Shared.strict.get()
        let box = try strict.sandbox()
        #expect(issuer(client(box, strict)) == strict.issuer)
    }

    /// Item 10: a configuration made in code can name its program (`appName`), whose store is its own.
    @Test func aConfigurationMadeInCodeKeepsItsOwnStore() async throws {
        let strict = try Shared.strict.get()
        let box = try strict.sandbox()
        let mine = SignInClient(configuration: SignInConfiguration(clientID: box.clientID, issuer: strict.issuer, appName: "my-worker"), environment: box.environment)
        _ = try await mine.signIn()
        #expect(FileManager.default.fileExists(atPath: box.environment["XDG_DATA_HOME"]! + "/my-worker"))
        #expect(!FileManager.default.fileExists(atPath: box.environment["XDG_DATA_HOME"]! + "/signin"), "the signin command's store is untouched")
    }
}

