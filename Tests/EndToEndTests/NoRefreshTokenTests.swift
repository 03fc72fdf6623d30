import Foundation
import Testing

@Suite struct NoRefreshTokenTests {
    @Test func aSignInWithoutRefreshTokenSaysWhatThatMeans() throws {
        let mock = try Provider(script: "mock_provider.py", environment: ["MOCK_NO_REFRESH": "1"])
        defer { mock.stop() }
        let box = try Sandbox(issuer: mock.issuer, secret: "s")
        let r = try box.signin("login")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("issued no refresh token") && r.stderr.contains("offline_access"))
        #expect(try box.signin("token").status == 0)  // the access token itself is fine
        let forced = try box.signin("token", "--force-refresh")
        #expect(forced.status == 3)
        #expect(forced.stderr.contains("no refresh token is stored"))
    }
}
