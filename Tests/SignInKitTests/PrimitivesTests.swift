import Foundation
import Testing
@testable import SignInKit
@testable import SignInBase
@testable import SignInTransport
@testable import SignInProtocol
@testable import SignInStorage

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

    /// One row per authorization response: what arrived, whether the provider promised `iss`, the verdict.
    static let callbacks: [(query: String, issuerRequired: Bool, verdict: String)] = [
        ("code=c1&state=s1", false, "accept c1"),
        ("code=c1&state=other", false, "refuse"),
        ("code=c1", false, "refuse"),
        ("error=access_denied&state=s1", false, "end canceled"),
        ("error=access_denied", false, "end canceled"),
        ("code=c1&state=s1&iss=https%3A%2F%2Fevil.example", false, "end callbackRejected"),
        ("code=c1&state=s1&iss=https%3A%2F%2Fissuer.example", false, "accept c1"),
        ("code=c1&state=s1&iss=https%3A%2F%2Fissuer.example", true, "accept c1"),
        // RFC 9207 2.4: the provider promised iss, so a response without it is refused (the wait goes on).
        ("code=c1&state=s1", true, "refuse"),
        ("state=s1&state=s1&code=c1", false, "refuse"),
        ("error=server_error&state=s1", false, "end providerError"),
        ("state=s1", false, "end providerError"),
    ]

    @Test(arguments: callbacks.indices) func callbackValidation(_ i: Int) {
        let row = Self.callbacks[i]
        var v = CallbackValidator(state: "s1", issuer: "https://issuer.example")
        v.issuerRequired = row.issuerRequired
        let verdict: String
        switch v.check(query: Substring(row.query)) {
        case .accept(let code): verdict = "accept \(code)"
        case .refuse: verdict = "refuse"
        case .end(let e):
            switch e {
            case .canceled: verdict = "end canceled"
            case .callbackRejected: verdict = "end callbackRejected"
            case .providerError: verdict = "end providerError"
            default: verdict = "end \(e)"
            }
        }
        #expect(verdict == row.verdict, "\(row.query)")
    }

    @Test func pastedAddresses() {
        let v = CallbackValidator(state: "s1", issuer: "https://issuer.example")
        #expect(v.checkPasted("http://127.0.0.1:5000/callback?code=c1&state=s1#") == .accept(code: "c1"))
        if case .refuse = v.checkPasted("c1") {} else { Issue.record("junk paste accepted") }
    }
}
