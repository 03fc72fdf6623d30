import Foundation
import Testing
@testable import SignInKit
@testable import SignInBase
@testable import SignInTransport
@testable import SignInProtocol
@testable import SignInStorage

/// Hostile or broken provider answers: each a clear provider error, never a crash or a hang.
@Suite struct ProviderAnswerTests {
    func tokenError(_ body: [UInt8], status: Int = 200) -> String? {
        do {
            _ = try TokenResponse.parse(HTTPResponse(status: status, body: Data(body)), endpoint: "token endpoint (t)")
            return nil
        } catch {
            guard case .providerError(let endpoint, let code, _) = error, endpoint == "token endpoint (t)" else { return "wrong error: \(error)" }
            return code
        }
    }

    @Test func brokenTokenResponses() {
        let good = #"{"access_token":"a","token_type":"Bearer","expires_in":3600}"#
        #expect(tokenError(Array(good.utf8)) == nil)
        #expect(tokenError(Array(good.utf8.dropLast(5))) == "invalid_response")  // truncated
        #expect(tokenError(Array(#"{"access_token":5,"token_type":"Bearer"}"#.utf8)) == "invalid_response")  // wrong type
        #expect(tokenError(Array(#"{"access_token":"a","token_type":"Bearer","expires_in":1e400}"#.utf8)) == "invalid_response")  // huge
        #expect(tokenError(Array(#"{"access_token":"a","token_type":"Bearer","expires_in":-5}"#.utf8)) == "invalid_response")
        #expect(tokenError(Array(#"{"access_token":"a","token_type":"MAC"}"#.utf8)) == "invalid_response")
        #expect(tokenError([0xff, 0xfe, 0x7b, 0x7d]) == "invalid_response")  // not UTF-8
        #expect(tokenError(Array(repeating: UInt8(ascii: "["), count: 200_000)) == "invalid_response")  // deep nesting
        #expect(tokenError(Array(#"[1,2]"#.utf8)) == "invalid_response")
        #expect(tokenError([]) == "invalid_response")
        #expect(tokenError(Array(#"{"error":"invalid_grant"}"#.utf8), status: 400) == "invalid_grant")
        #expect(tokenError([], status: 400) == "http_400")
        #expect(tokenError(Array("<html>oops</html>".utf8), status: 502) == "http_502")
    }

    @Test func duplicateKeysDoNotSmuggleASecondValue() {
        // Whatever a duplicate key decodes to, it is one of the values and the answer stays well-formed.
        let r = try? TokenResponse.parse(HTTPResponse(status: 200, body: Data(#"{"access_token":"a","access_token":"b","token_type":"Bearer"}"#.utf8)), endpoint: "t")
        #expect(r == nil || ["a", "b"].contains(r!.accessToken))
    }

    @Test func oversizedDocumentsAreRefused() {
        var big = Array(#"{"keys":[],"pad":""#.utf8)
        big += Array(repeating: UInt8(ascii: "x"), count: 1 << 20)
        big += Array(#""}"#.utf8)
        #expect(JSONValue.object(from: Data(big)) == nil)
        #expect(throws: SignInError.self) { try JWKS.parse(Data(big), endpoint: "jwks") }
    }

    @Test func brokenKeySets() throws {
        for doc in [#"{"keys":{}}"#, #"{"keys":[{"kty":"RSA","n":"!!","e":"AQAB"}]}"#, #"{"keys":[{"kty":"EC","crv":"P-384","x":"AA","y":"AA"}]}"#,
                    #"{"keys":[{"kty":"RSA","n":"AQAB","e":"AQAB"}]}"#] {
            let parsed = try? JWKS.parse(Data(doc.utf8), endpoint: "jwks")
            #expect(parsed == nil || parsed!.keys.isEmpty, "\(doc)")  // unusable keys are skipped, never trusted
        }
    }

    @Test func idTokenWithHugeOrWrongTypedClaims() {
        let expect = IDToken.Expectations(issuer: "https://i", clientID: "c", nonce: nil, hostedDomain: nil)
        for claims in [#"{"iss":"https://i","aud":"c","sub":"s","exp":1e400,"iat":0}"#, #"{"iss":"https://i","aud":"c","sub":"s","exp":"soon","iat":0}"#,
                       #"{"iss":["https://i"],"aud":"c","sub":"s","exp":99999999999,"iat":0}"#, #"{"iss":"https://i","aud":7,"sub":"s","exp":99999999999,"iat":0}"#] {
            let raw = Base64URL.encode(Array(#"{"alg":"RS256"}"#.utf8)) + "." + Base64URL.encode(Array(claims.utf8)) + ".c2ln"
            // Refused when decoded (a number beyond Double) or when its claims are checked: never accepted.
            #expect(throws: SignInError.self) { try IDToken.decode(raw).checkClaims(expect) }
        }
    }
}
