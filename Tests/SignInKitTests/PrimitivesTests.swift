import Foundation
import Testing
@testable import SignInKit

@Suite struct PrimitivesTests {
    @Test func pkceMatchesRFC7636AppendixB() throws {
        let octets: [UInt8] = [116, 24, 223, 180, 151, 153, 224, 37, 79, 250, 96, 125, 216, 173, 187, 186,
                               22, 212, 37, 77, 105, 214, 191, 240, 91, 88, 5, 88, 83, 132, 141, 121]
        let verifier = Base64URL.encode(octets)
        #expect(verifier == "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
        #expect(PKCE(verifier: verifier).challenge == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
        let fresh = try PKCE()
        #expect((43...128).contains(fresh.verifier.count))
        #expect(try PKCE().verifier != fresh.verifier)
    }

    @Test func base64url() {
        #expect(Base64URL.encode([0xfb, 0xff, 0xfe]) == "-__-")
        #expect(Base64URL.encode(Array("f".utf8)) == "Zg")
        #expect(Base64URL.decode("-__-").map(Array.init) == [0xfb, 0xff, 0xfe])
        #expect(Base64URL.decode("Zg").map(Array.init) == Array("f".utf8))
        for bad in ["Z", "Zg==", "a+b/", "a b", "é"] { #expect(Base64URL.decode(bad) == nil, "\(bad)") }
    }

    @Test func formDecodingRefusesMalformedAndRepeatedParameters() {
        #expect(FormEncoding.decode("a=1&b=x%20y+z") == ["a": "1", "b": "x y z"])
        #expect(FormEncoding.decode("a=%zz") == nil)
        #expect(FormEncoding.decode("a=%") == nil)
        #expect(FormEncoding.decode("a=%00") == nil)
        #expect(FormEncoding.decode("a=%ff") == nil)
        #expect(FormEncoding.decode("state=1&state=2") == nil)
        #expect(FormEncoding.escape("a b&c=d/é") == "a%20b%26c%3Dd%2F%C3%A9")
    }

    @Test func constantTimeEquality() {
        #expect(Crypto.constantTimeEqual("abc", "abc"))
        #expect(!Crypto.constantTimeEqual("abc", "abd"))
        #expect(!Crypto.constantTimeEqual("abc", "abcd"))
    }

    @Test func aesGCMRoundTripAndTamperDetection() throws {
        let key = try Crypto.randomBytes(32)
        let sealed = try Crypto.seal(Array("secret".utf8), key: key, aad: [1, 2])
        #expect(Crypto.open(sealed, key: key, aad: [1, 2]) == Array("secret".utf8))
        #expect(Crypto.open(sealed, key: key, aad: [1, 3]) == nil)
        var flipped = sealed
        flipped.ciphertext[0] ^= 1
        #expect(Crypto.open(flipped, key: key, aad: [1, 2]) == nil)
        #expect(try Crypto.seal([], key: key, aad: []).ciphertext.isEmpty)
        #expect(try Crypto.seal(Array("x".utf8), key: key, aad: []).nonce != sealed.nonce)
    }

    @Test func callbackValidation() {
        let v = CallbackValidator(state: "s1", issuer: "https://issuer.example", acceptGoogleIssuerForm: false)
        if case .accept(let code) = v.check(query: "code=c1&state=s1") { #expect(code == "c1") } else { Issue.record("valid callback refused") }
        if case .refuse = v.check(query: "code=c1&state=other") {} else { Issue.record("wrong state accepted") }
        if case .refuse = v.check(query: "code=c1") {} else { Issue.record("missing state accepted") }
        if case .end(.canceled) = v.check(query: "error=access_denied&state=s1") {} else { Issue.record("denial not a cancel") }
        if case .end(.callbackRejected) = v.check(query: "code=c1&state=s1&iss=https%3A%2F%2Fevil.example") {} else { Issue.record("mix-up accepted") }
        if case .accept = v.check(query: "code=c1&state=s1&iss=https%3A%2F%2Fissuer.example") {} else { Issue.record("right iss refused") }
        if case .accept = v.checkPasted("http://127.0.0.1:5000/callback?code=c1&state=s1#") {} else { Issue.record("paste refused") }
        if case .refuse = v.checkPasted("c1") {} else { Issue.record("junk paste accepted") }
    }
}

@Suite struct BrowserCommandTests {
    let url = "https://accounts.google.com/o/oauth2/v2/auth?client_id=a&redirect_uri=http%3A%2F%2F127.0.0.1%3A5%2Fcb&scope=openid%20email&state=x=y"

    @Test func browserVariableIsUsedWithoutAShellAndTheURLStaysWhole() {
        #expect(Browser.command(for: url, environment: ["BROWSER": "firefox"]) == ["firefox", url])
        #expect(Browser.command(for: url, environment: ["BROWSER": "open-it --new-tab %s:lynx"]) == ["open-it", "--new-tab", url])
        #expect(Browser.localBrowserLikely(environment: ["BROWSER": "x"]))
        #expect(!Browser.localBrowserLikely(environment: ["SSH_CONNECTION": "1 2 3 4"]))
        #expect(!Browser.localBrowserLikely(environment: [:]) || Browser.isWSL)
        #expect(Browser.localBrowserLikely(environment: ["DISPLAY": ":0"]))
    }
}
