import COpenSSL
import FoundationEssentials

/// The only place that talks to OpenSSL: random bytes, SHA-256, AES-256-GCM and JWS signature checks.
enum Crypto {
    /// Bytes from OpenSSL's CSPRNG.
    static func randomBytes(_ count: Int) throws(SignInError) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        let ok = out.withUnsafeMutableBytes { RAND_bytes($0.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(count)) }
        guard ok == 1 else { throw .system(reason: "OpenSSL could not produce random bytes") }
        return out
    }

    static func sha256<D: DataProtocol>(_ data: D) -> [UInt8] {
        let bytes = Array(data)
        var digest = [UInt8](repeating: 0, count: 32)
        var len: UInt32 = 0
        _ = bytes.withUnsafeBytes { input in
            EVP_Digest(input.baseAddress, input.count, &digest, &len, EVP_sha256(), nil)
        }
        return digest
    }

    /// Compares two secrets in time that depends on their lengths only.
    static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        if x.isEmpty { return true }
        return x.withUnsafeBytes { px in y.withUnsafeBytes { py in CRYPTO_memcmp(px.baseAddress, py.baseAddress, x.count) == 0 } }
    }

    /// scrypt (RFC 7914) through OpenSSL: a 32-byte key-encryption key from a passphrase.
    static func scrypt(passphrase: [UInt8], salt: [UInt8], n: UInt64, r: UInt64, p: UInt64) throws(SignInError) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        // OpenSSL caps scrypt's memory at 32 MiB unless told otherwise; allow what these parameters need.
        let maxmem = 129 * n * r * p + (1 << 20)
        var pw = passphrase.map { CChar(bitPattern: $0) } + [0]
        defer { for i in pw.indices { pw[i] = 0 } }
        let ok = salt.withUnsafeBufferPointer { s in EVP_PBE_scrypt(pw, passphrase.count, s.baseAddress, s.count, n, r, p, maxmem, &out, out.count) }
        guard ok == 1 else { throw .system(reason: "OpenSSL could not derive a key from the passphrase (scrypt)") }
        return out
    }

    struct Sealed {
        var nonce: [UInt8]
        var ciphertext: [UInt8]
        var tag: [UInt8]
    }

    static func seal(_ plaintext: [UInt8], key: [UInt8], aad: [UInt8]) throws(SignInError) -> Sealed {
        precondition(key.count == 32)
        let nonce = try randomBytes(12)
        guard let ctx = EVP_CIPHER_CTX_new() else { throw .system(reason: "cipher context unavailable") }
        defer { EVP_CIPHER_CTX_free(ctx) }
        var out = [UInt8](repeating: 0, count: plaintext.count + 16)
        var tag = [UInt8](repeating: 0, count: 16)
        var len: Int32 = 0, total = 0
        guard EVP_EncryptInit_ex(ctx, EVP_aes_256_gcm(), nil, nil, nil) == 1,
            signin_gcm_set_ivlen(ctx, 12) == 1,
            EVP_EncryptInit_ex(ctx, nil, nil, key, nonce) == 1,
            aad.isEmpty || EVP_EncryptUpdate(ctx, nil, &len, aad, Int32(aad.count)) == 1,
            plaintext.isEmpty || EVP_EncryptUpdate(ctx, &out, &len, plaintext, Int32(plaintext.count)) == 1
        else { throw .system(reason: "AES-256-GCM encryption failed") }
        total = Int(plaintext.isEmpty ? 0 : len)
        let finalOK = out.withUnsafeMutableBufferPointer { p in EVP_EncryptFinal_ex(ctx, p.baseAddress! + total, &len) }
        guard finalOK == 1, signin_gcm_get_tag(ctx, &tag, 16) == 1 else { throw .system(reason: "AES-256-GCM encryption failed") }
        total += Int(len)
        return Sealed(nonce: nonce, ciphertext: Array(out[0..<total]), tag: tag)
    }

    /// Returns nil when the tag does not authenticate the ciphertext and associated data.
    static func open(_ sealed: Sealed, key: [UInt8], aad: [UInt8]) -> [UInt8]? {
        guard key.count == 32, sealed.nonce.count == 12, sealed.tag.count == 16, let ctx = EVP_CIPHER_CTX_new() else { return nil }
        defer { EVP_CIPHER_CTX_free(ctx); ERR_clear_error() }
        var out = [UInt8](repeating: 0, count: sealed.ciphertext.count + 16)
        var tag = sealed.tag
        var len: Int32 = 0
        guard EVP_DecryptInit_ex(ctx, EVP_aes_256_gcm(), nil, nil, nil) == 1,
            signin_gcm_set_ivlen(ctx, 12) == 1,
            EVP_DecryptInit_ex(ctx, nil, nil, key, sealed.nonce) == 1,
            aad.isEmpty || EVP_DecryptUpdate(ctx, nil, &len, aad, Int32(aad.count)) == 1
        else { return nil }
        len = 0
        if !sealed.ciphertext.isEmpty {
            guard EVP_DecryptUpdate(ctx, &out, &len, sealed.ciphertext, Int32(sealed.ciphertext.count)) == 1 else { return nil }
        }
        let total = Int(len)
        guard signin_gcm_set_tag(ctx, &tag, 16) == 1 else { return nil }
        let ok = out.withUnsafeMutableBufferPointer { p in EVP_DecryptFinal_ex(ctx, p.baseAddress! + total, &len) }
        guard ok == 1 else { return nil }
        return Array(out[0..<(total + Int(len))])
    }
}

/// A public key usable to verify a JWS signature, built from a JWK.
final class VerificationKey: @unchecked Sendable {
    enum Kind { case rsa, ecP256 }
    let kind: Kind
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
    func verify(signature: [UInt8], message: [UInt8]) -> Bool {
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
