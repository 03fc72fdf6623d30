import Foundation
import Testing

/// A plain OAuth 2.0 server known only by its configured endpoints, as a GitHub-style OAuth app is: no discovery, no
/// OpenID, a form-encoded token answer, an access token with no lifetime and no refresh token, the person's profile
/// from a `/user` API; and an error such a server answers with HTTP 200.
@Suite struct PlainOAuthServerTests {
    static func app(_ strict: Provider, _ settings: [String: Any]) throws -> Sandbox {
        try strict.sandbox(settings, extra: ["authorization_endpoint": strict.issuer + "/authorize", "token_endpoint": strict.issuer + "/token",
                                             "userinfo_endpoint": strict.issuer + "/user", "scopes": ["read:user"]])
    }

    @Test func aGitHubStyleOAuthAppSignsInWithoutAnIDToken() throws {
        let strict = try Shared.strict.get()
        let box = try Self.app(strict, ["form_answer": true, "no_expiry": true])
        let login = try box.signin("login", "--timeout", "30")
        #expect(login.status == 0 && login.stdout.contains("Signed in as Alice Hubber <alice@example.org>"), "\(login.stdout) \(login.stderr)")
        let first = try box.signin("token")
        let second = try box.signin("token")
        #expect(first.status == 0 && !first.stdout.isEmpty && first.stdout == second.stdout, "\(first.stderr) \(second.stderr)")
        #expect(try strict.stats(box.clientID)["refreshes"] as? Int ?? 0 == 0, "a token without lifetime or refresh token is used as it is")
        let whoami = try box.signin("whoami", "--json")
        let profile = TokensForEveryAPITests.json(whoami.stdout)["profile"] as? [String: Any]
        #expect(profile?["sub"] as? String == "4242" && TokensForEveryAPITests.json(whoami.stdout)["identity"] as? String == "userinfo", "\(whoami.stdout)")
        let status = try box.signin("status")
        #expect(status.stdout.contains("Identity: from the server's profile endpoint"), "\(status.stdout)")
        // A client registered by hand, named in the configuration.
        let statusJSON = TokensForEveryAPITests.json(try box.signin("status", "--json").stdout)
        #expect(!status.stdout.contains("Client:") && statusJSON["client_kind"] as? String == "configured", "\(status.stdout) \(statusJSON)")
    }

    @Test func anErrorAnsweredWithHTTP200IsAnErrorAndNothingIsStored() throws {
        let strict = try Shared.strict.get()
        let box = try Self.app(strict, ["form_answer": true, "token_error_200": "bad_verification_code"])
        let login = try box.signin("login", "--timeout", "30")
        #expect(login.status == 5 && login.stderr.contains("bad_verification_code"), "\(login.status) \(login.stderr)")
        #expect(box.entryFile() == nil)
    }
}
