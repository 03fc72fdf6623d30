import SignInBase
import SignInTransport
import CSignInOpenSSL
import FoundationEssentials

/// A public key usable to verify a JWS signature, built from a JWK.
package final class VerificationKey: @unchecked Sendable {
    package enum Kind { case rsa, ecP256 }
    package let kind: Kind
    private let pkey: OpaquePointer

    private init(kind: Kind, pkey: OpaquePointer) {
        self.kind = kind
        self.pkey = pkey
    }

    deinit { EVP_PKEY_free(pkey) }

    /// An RSA public key from its modulus and exponent (big-endian bytes).
    static func rsa(n: [UInt8], e: [UInt8]) -> VerificationKey? {
        guard n.count >= 256, n.count <= 1024, !e.isEmpty, e.count <= 8 else { return nil }  // RSA 2048..8192 bits
        return fromData(type: "RSA", kind: .rsa) { bld, keep in
            guard let bn = BN_bin2bn(n, Int32(n.count), nil), let be = BN_bin2bn(e, Int32(e.count), nil) else { return false }
            keep.append(bn); keep.append(be)
            return OSSL_PARAM_BLD_push_BN(bld, signin_param_rsa_n(), bn) == 1
                && OSSL_PARAM_BLD_push_BN(bld, signin_param_rsa_e(), be) == 1
        }
    }

    /// A P-256 public key from its affine coordinates (32 bytes each).
    static func p256(x: [UInt8], y: [UInt8]) -> VerificationKey? {
        guard x.count == 32, y.count == 32 else { return nil }
        let point = [UInt8(4)] + x + y
        let pointBuf = UnsafeMutablePointer<UInt8>.allocate(capacity: point.count)
        pointBuf.initialize(from: point, count: point.count)
        defer { pointBuf.deallocate() }
        return fromData(type: "EC", kind: .ecP256) { bld, _ in
            OSSL_PARAM_BLD_push_utf8_string(bld, signin_param_group(), signin_group_p256(), 0) == 1
                && OSSL_PARAM_BLD_push_octet_string(bld, signin_param_pub(), pointBuf, point.count) == 1
        }
    }

    private static func fromData(type: String, kind: Kind, _ push: (OpaquePointer, inout [OpaquePointer]) -> Bool) -> VerificationKey? {
        signin_crypto_init()
        defer { ERR_clear_error() }
        guard let bld = OSSL_PARAM_BLD_new() else { return nil }
        var bignums: [OpaquePointer] = []
        defer {
            OSSL_PARAM_BLD_free(bld)
            bignums.forEach { BN_free($0) }
        }
        guard push(bld, &bignums), let params = OSSL_PARAM_BLD_to_param(bld) else { return nil }
        defer { OSSL_PARAM_free(params) }
        guard let ctx = EVP_PKEY_CTX_new_from_name(nil, type, nil) else { return nil }
        defer { EVP_PKEY_CTX_free(ctx) }
        var pkey: OpaquePointer?
        guard EVP_PKEY_fromdata_init(ctx) == 1,
            EVP_PKEY_fromdata(ctx, &pkey, Int32(SIGNIN_EVP_PKEY_PUBLIC_KEY), params) == 1, let pkey
        else { return nil }
        return VerificationKey(kind: kind, pkey: pkey)
    }

    /// Verifies a JWS signature over `message`. For P-256 the signature is raw r||s (RFC 7518 3.4).
    package func verify(signature: [UInt8], message: [UInt8]) -> Bool {
        defer { ERR_clear_error() }
        var der: [UInt8]
        switch kind {
        case .rsa:
            der = signature
        case .ecP256:
            guard signature.count == 64, let sig = ECDSA_SIG_new() else { return false }
            defer { ECDSA_SIG_free(sig) }
            guard let r = BN_bin2bn(signature, 32, nil) else { return false }
            guard let s = signature.withUnsafeBufferPointer({ BN_bin2bn($0.baseAddress! + 32, 32, nil) }) else {
                BN_free(r)
                return false
            }
            guard ECDSA_SIG_set0(sig, r, s) == 1 else {
                BN_free(r); BN_free(s)
                return false
            }
            var out: UnsafeMutablePointer<UInt8>?
            let len = i2d_ECDSA_SIG(sig, &out)
            guard len > 0, let out else { return false }
            der = Array(UnsafeBufferPointer(start: out, count: Int(len)))
            signin_openssl_free(out)
        }
        guard let md = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(md) }
        guard EVP_DigestVerifyInit(md, nil, EVP_sha256(), nil, pkey) == 1 else { return false }
        return EVP_DigestVerify(md, der, der.count, message, message.count) == 1
    }
}
