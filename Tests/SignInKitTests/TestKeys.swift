import CSignInOpenSSL
import Foundation
@testable import SignInKit
@testable import SignInBase
@testable import SignInTransport
@testable import SignInProtocol
@testable import SignInStorage

/// Test-only signing keys, made with OpenSSL, to mint ID tokens that SignInKit must accept or refuse.
final class TestKey: @unchecked Sendable {
    let pkey: OpaquePointer
    let alg: String
    let kid: String?

    init(alg: String, kid: String? = "k1") {
        self.alg = alg
        self.kid = kid
        let ctx = EVP_PKEY_CTX_new_from_name(nil, alg == "RS256" ? "RSA" : "EC", nil)!
        defer { EVP_PKEY_CTX_free(ctx) }
        precondition(EVP_PKEY_keygen_init(ctx) == 1)
        if alg == "RS256" {
            // OpenSSL 3 generates 2048-bit RSA keys by default.
        } else {
            precondition(EVP_PKEY_CTX_set_group_name(ctx, "prime256v1") == 1)
        }
        var k: OpaquePointer?
        precondition(EVP_PKEY_generate(ctx, &k) == 1)
        pkey = k!
    }

    deinit { EVP_PKEY_free(pkey) }

    private func bnParam(_ name: String) -> [UInt8] {
        var bn: OpaquePointer?
        precondition(EVP_PKEY_get_bn_param(pkey, name, &bn) == 1)
        defer { BN_free(bn) }
        let n = (BN_num_bits(bn) + 7) / 8
        var out = [UInt8](repeating: 0, count: Int(n))
        BN_bn2bin(bn, &out)
        return out
    }

    /// The public JWK for this key.
    var jwk: [String: Any] {
        var j: [String: Any]
        if alg == "RS256" {
            j = ["kty": "RSA", "n": Base64URL.encode(bnParam("n")), "e": Base64URL.encode(bnParam("e")), "alg": "RS256", "use": "sig"]
        } else {
            var x = bnParam("qx"), y = bnParam("qy")
            while x.count < 32 { x.insert(0, at: 0) }
            while y.count < 32 { y.insert(0, at: 0) }
            j = ["kty": "EC", "crv": "P-256", "x": Base64URL.encode(x), "y": Base64URL.encode(y)]
        }
        if let kid { j["kid"] = kid }
        return j
    }

    static func jwksData(_ keys: [TestKey]) -> Data {
        try! JSONSerialization.data(withJSONObject: ["keys": keys.map(\.jwk)])
    }

    /// A compact JWS over `claims` with this key (header alg and kid overridable).
    func sign(_ claims: [String: Any], header: [String: Any]? = nil) -> String {
        var h: [String: Any] = ["alg": alg, "typ": "JWT"]
        if let kid { h["kid"] = kid }
        if let header { h = header }
        let input = Base64URL.encode(try! JSONSerialization.data(withJSONObject: h)) + "." + Base64URL.encode(try! JSONSerialization.data(withJSONObject: claims))
        let md = EVP_MD_CTX_new()!
        defer { EVP_MD_CTX_free(md) }
        precondition(EVP_DigestSignInit(md, nil, EVP_sha256(), nil, pkey) == 1)
        let msg = Array(input.utf8)
        var len = 0
        precondition(EVP_DigestSign(md, nil, &len, msg, msg.count) == 1)
        var sig = [UInt8](repeating: 0, count: len)
        precondition(EVP_DigestSign(md, &sig, &len, msg, msg.count) == 1)
        sig = Array(sig[0..<len])
        if alg == "ES256" { sig = Self.derToRaw(sig) }
        return input + "." + Base64URL.encode(sig)
    }

    static func derToRaw(_ der: [UInt8]) -> [UInt8] {
        var p: UnsafePointer<UInt8>? = der.withUnsafeBufferPointer { UnsafePointer($0.baseAddress) }
        let copy = UnsafeMutablePointer<UInt8>.allocate(capacity: der.count)
        copy.initialize(from: der, count: der.count)
        defer { copy.deallocate() }
        p = UnsafePointer(copy)
        let sig = d2i_ECDSA_SIG(nil, &p, der.count)!
        defer { ECDSA_SIG_free(sig) }
        var r = [UInt8](repeating: 0, count: 32), s = [UInt8](repeating: 0, count: 32)
        BN_bn2binpad(ECDSA_SIG_get0_r(sig), &r, 32)
        BN_bn2binpad(ECDSA_SIG_get0_s(sig), &s, 32)
        return r + s
    }
}
