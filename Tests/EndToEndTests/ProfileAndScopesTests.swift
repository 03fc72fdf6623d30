import Foundation
import Testing

/// The profile and scopes a sign-in ends with, where the provider says less than asked.
@Suite struct ProfileAndScopesTests {
    @Test func missingProfileClaimsComeFromUserinfo() throws {
        let strict = try Shared.strict.get()
        let box = try strict.sandbox(["id_token_claims": ["name": NSNull(), "email": NSNull()]])
        let r = try box.signin("login")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == "Signed in as Alice Example <alice@example.org>\n")
    }

    @Test func fewerScopesGrantedAreReportedAndStored() throws {
        let strict = try Shared.strict.get()
        let box = try strict.sandbox(["granted_scope": "openid email"])
        let r = try box.signin("login")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("not granted: profile"))
        #expect(try box.signin("status", "--json").stdout.contains(#""granted_scopes":["openid","email"]"#))
    }
}
