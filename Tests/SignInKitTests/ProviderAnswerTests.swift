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
        #expect(tokenError(Array(#"{"access_token":"a","token_type":"MAC"}"#.utf8)) == "invalid_response")
        #expect(tokenError(Array(#"{"access_token":"a","token_type":"Bearer","expires_in":1e400}"#.utf8)) == "invalid_response")  // not JSON here
        #expect(tokenError([0xff, 0xfe, 0x7b, 0x7d]) == "invalid_response")  // not UTF-8
        #expect(tokenError(Array(repeating: UInt8(ascii: "["), count: 200_000)) == "invalid_response")  // deep nesting
        #expect(tokenError(Array(#"[1,2]"#.utf8)) == "invalid_response")
        #expect(tokenError([]) == "invalid_response")
        #expect(tokenError(Array(#"{"error":"invalid_grant"}"#.utf8), status: 400) == "invalid_grant")
        #expect(tokenError([], status: 400) == "http_400")
        #expect(tokenError(Array("<html>oops</html>".utf8), status: 502) == "http_502")
    }

    /// An absurd lifetime is bounded, never fatal (the answer may carry a rotated refresh token): negative or
    /// unreadable reads as unsaid, more than a year as a year.
    @Test func absurdLifetimesAreBounded() throws {
        func lifetime(_ json: String) throws -> Int? {
            try TokenResponse.parse(HTTPResponse(status: 200, body: Data(json.utf8)), endpoint: "t").expiresIn
        }
        #expect(try lifetime(#"{"access_token":"a","token_type":"Bearer","expires_in":400000000}"#) == TokenResponse.longestLifetime)
        #expect(try lifetime(#"{"access_token":"a","token_type":"Bearer","expires_in":-5}"#) == nil)
        #expect(try lifetime(#"{"access_token":"a","token_type":"Bearer","expires_in":3600}"#) == 3600)
        // The refresh token of a refused answer is still found, and only a plausible one.
        let refused = HTTPResponse(status: 200, body: Data(#"{"access_token":"a","token_type":"MAC","refresh_token":"rt-2"}"#.utf8))
        #expect(TokenResponse.refreshToken(in: refused) == "rt-2")
        #expect(TokenResponse.refreshToken(in: HTTPResponse(status: 200, body: Data(#"{"refresh_token":"a b"}"#.utf8))) == nil)
        #expect(TokenResponse.refreshToken(in: HTTPResponse(status: 400, body: Data(#"{"refresh_token":"rt"}"#.utf8))) == nil)
    }

    /// A form-encoded answer (GitHub-style OAuth apps) is read as JSON is; its error answered with HTTP 200 is an error.
    @Test func formEncodedAnswersAreRead() throws {
        let form = ["content-type": "application/x-www-form-urlencoded; charset=utf-8"]
        let ok = try TokenResponse.parse(HTTPResponse(status: 200, body: Data("access_token=gho_abc&scope=repo%2Cuser&token_type=bearer&expires_in=28800".utf8), headers: form), endpoint: "t")
        #expect(ok.accessToken == "gho_abc" && ok.expiresIn == 28800)
        let error = HTTPResponse(status: 200, body: Data("error=bad_verification_code&error_description=The+code+is+wrong".utf8), headers: form)
        #expect(throws: SignInError.self) { try TokenResponse.parse(error, endpoint: "t") }
        do { _ = try TokenResponse.parse(error, endpoint: "t") } catch {
            guard case .providerError(_, let code, let detail) = error else { Issue.record("\(error)"); return }
            #expect(code == "bad_verification_code" && detail == "The code is wrong")
        }
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
        let expect = IDToken.Expectations(issuer: "https://i", clientID: "c", nonce: nil)
        for claims in [#"{"iss":"https://i","aud":"c","sub":"s","exp":1e400,"iat":0}"#, #"{"iss":"https://i","aud":"c","sub":"s","exp":"soon","iat":0}"#,
                       #"{"iss":["https://i"],"aud":"c","sub":"s","exp":99999999999,"iat":0}"#, #"{"iss":"https://i","aud":7,"sub":"s","exp":99999999999,"iat":0}"#] {
            let raw = Base64URL.encode(Array(#"{"alg":"RS256"}"#.utf8)) + "." + Base64URL.encode(Array(claims.utf8)) + ".c2ln"
            // Refused when decoded (a number beyond Double) or when its claims are checked: never accepted.
            #expect(throws: SignInError.self) { try IDToken.decode(raw).checkClaims(expect) }
        }
    }

    /// A server's metadata is read once into its typed members: a member of the wrong type or an empty string is as
    /// absent (never a crash, never an empty endpoint), and an RFC 8414 document lacking OpenID's members takes them
    /// from the same issuer's OpenID document without overriding what it names itself.
    @Test func serverMetadataIsTypedAndAHybridDocumentIsCompleted() throws {
        let oauth = AuthorizationServerMetadata(document: JSONValue.object(from: Data("""
            {"issuer": "https://as.example", "authorization_endpoint": "https://as.example/authorize", "token_endpoint": "",
             "registration_endpoint": 7, "scopes_supported": ["read", 3, "openid"], "code_challenge_methods_supported": "S256",
             "client_id_metadata_document_supported": "yes", "require_pushed_authorization_requests": true}
            """.utf8))!, url: "https://as.example/.well-known/oauth-authorization-server")
        #expect(oauth.isOAuthMetadata && oauth.issuer == "https://as.example")
        #expect(oauth.tokenEndpoint == nil && oauth.registrationEndpoint == nil && oauth.jwksURI == nil)
        #expect(oauth.scopesSupported == ["read", "openid"] && oauth.isOpenIDProvider)
        #expect(oauth.codeChallengeMethodsSupported == nil && oauth.clientIDMetadataDocumentSupported == nil)
        #expect(oauth.requirePushedAuthorizationRequests == true)

        let openID = AuthorizationServerMetadata(document: JSONValue.object(from: Data("""
            {"issuer": "https://as.example", "authorization_endpoint": "https://as.example/other", "token_endpoint": "https://as.example/token",
             "jwks_uri": "https://as.example/jwks", "require_pushed_authorization_requests": false}
            """.utf8))!, url: "https://as.example/.well-known/openid-configuration")
        let hybrid = oauth.completed(by: openID)
        #expect(hybrid.authorizationEndpoint == "https://as.example/authorize")
        #expect(hybrid.tokenEndpoint == "https://as.example/token" && hybrid.jwksURI == "https://as.example/jwks")
        #expect(hybrid.requirePushedAuthorizationRequests == true)
        #expect(!openID.isOAuthMetadata && AuthorizationServerMetadata(document: [:], url: "u").isOpenIDProvider == false)

        // Every member signin reads is read from its own name, and completed from the other document when missing.
        let names = ["authorization_endpoint", "token_endpoint", "jwks_uri", "userinfo_endpoint", "revocation_endpoint",
                     "device_authorization_endpoint", "registration_endpoint", "pushed_authorization_request_endpoint"]
        let flags = ["require_pushed_authorization_requests", "authorization_response_iss_parameter_supported", "client_id_metadata_document_supported"]
        let lists = ["scopes_supported", "code_challenge_methods_supported", "token_endpoint_auth_methods_supported", "grant_types_supported",
                     "dpop_signing_alg_values_supported"]
        var document: [String: JSONValue] = ["issuer": .string("https://as.example")]
        for n in names { document[n] = .string("https://as.example/\(n)") }
        for n in flags { document[n] = .bool(true) }
        for n in lists { document[n] = .array([.string(n)]) }
        let full = AuthorizationServerMetadata(document: document, url: "https://as.example/.well-known/openid-configuration")
        let read: [String?] = [full.authorizationEndpoint, full.tokenEndpoint, full.jwksURI, full.userinfoEndpoint, full.revocationEndpoint,
                               full.deviceAuthorizationEndpoint, full.registrationEndpoint, full.pushedAuthorizationRequestEndpoint]
        #expect(read == names.map { "https://as.example/\($0)" })
        #expect([full.requirePushedAuthorizationRequests, full.authorizationResponseIssParameterSupported, full.clientIDMetadataDocumentSupported] == [true, true, true])
        #expect([full.scopesSupported, full.codeChallengeMethodsSupported, full.tokenEndpointAuthMethodsSupported, full.grantTypesSupported,
                 full.dpopSigningAlgValuesSupported] == lists.map { [$0] })
        #expect(AuthorizationServerMetadata(document: ["issuer": .string("https://as.example")], url: "u").completed(by: full) == AuthorizationServerMetadata(document: document, url: "u"))
    }
}
