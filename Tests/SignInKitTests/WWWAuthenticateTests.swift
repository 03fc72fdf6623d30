import Foundation
import Testing
@testable import SignInKit
@testable import SignInBase
@testable import SignInTransport
@testable import SignInProtocol
@testable import SignInStorage

/// `WWW-Authenticate` read as RFC 9110 writes it, with RFC 6750's and RFC 9728's parameters.
@Suite struct WWWAuthenticateTests {
    @Test func challengesParametersAndQuotedStrings() {
        let h = WWWAuthenticate(#"Basic realm="x, y", Bearer scope="mcp admin", error="insufficient_scope", resource_metadata="https://api.example/.well-known/oauth-protected-resource/mcp", error_description="a \"quoted\" word""#)
        #expect(h.challenges.map(\.scheme) == ["Basic", "Bearer"])
        #expect(h.challenges[0].parameters["realm"] == "x, y")
        let bearer = h.tokenChallenge
        #expect(bearer?.scheme == "Bearer" && bearer?.error == "insufficient_scope" && bearer?.scopes == ["mcp", "admin"])
        #expect(bearer?.resourceMetadata == "https://api.example/.well-known/oauth-protected-resource/mcp")
        #expect(bearer?.parameters["error_description"] == #"a "quoted" word"#)
        // Any order, token values, a DPoP challenge, a token68, odd spacing.
        let d = WWWAuthenticate(#"Negotiate abc123==, DPoP   algs="ES256" , error=invalid_token,Bearer"#)
        #expect(d.challenges.map(\.scheme) == ["Negotiate", "DPoP", "Bearer"], "\(d.challenges)")
        #expect(d.tokenChallenge?.scheme == "DPoP" && d.tokenChallenge?.error == "invalid_token")
        #expect(WWWAuthenticate("").challenges.isEmpty)
        #expect(WWWAuthenticate(#"Bearer error="unterminated"#).tokenChallenge?.scheme == "Bearer")
    }

    @Test func aBasicChallengeIsNoTokenChallenge() {
        #expect(WWWAuthenticate(#"Basic realm="api", resource_metadata="https://evil.example/meta""#).tokenChallenge == nil)
        #expect(WWWAuthenticate(#"Basic realm="api", Bearer resource_metadata="https://api.example/meta""#).tokenChallenge?.scheme == "Bearer")
    }
}
