import CSignInOpenSSL
import FoundationEssentials

/// OpenSSL for everything but signatures (`VerificationKey`): random bytes, SHA-256, AES-256-GCM, scrypt.
package enum Crypto {
    /// Bytes from OpenSSL's CSPRNG.
    package static func randomBytes(_ count: Int) throws(SignInError) -> [UInt8] {
        signin_crypto_init()
        var out = [UInt8](repeating: 0, count: count)
        let ok = out.withUnsafeMutableBytes { RAND_bytes($0.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(count)) }
        guard ok == 1 else { throw .system(reason: "OpenSSL could not produce random bytes") }
        return out
    }

    package static func sha256<D: DataProtocol>(_ data: D) -> [UInt8] {
        signin_crypto_init()
        let bytes = Array(data)
        var digest = [UInt8](repeating: 0, count: 32)
        var len: UInt32 = 0
        _ = bytes.withUnsafeBytes { input in
            EVP_Digest(input.baseAddress, input.count, &digest, &len, EVP_sha256(), nil)
        }
        return digest
    }

    /// Frees the calling thread's OpenSSL state (its random generators): called by a thread of signin's own just
    /// before it hands its result over and ends, so nothing of OpenSSL's outlives it while the process exits.
    static func releaseThreadState() { OPENSSL_thread_stop() }

    /// Compares two secrets in time that depends on their lengths only.
    package static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        if x.isEmpty { return true }
        return x.withUnsafeBytes { px in y.withUnsafeBytes { py in CRYPTO_memcmp(px.baseAddress, py.baseAddress, x.count) == 0 } }
    }

    /// scrypt (RFC 7914) through OpenSSL: a 32-byte key-encryption key from a passphrase.
    package static func scrypt(passphrase: [UInt8], salt: [UInt8], n: UInt64, r: UInt64, p: UInt64) throws(SignInError) -> [UInt8] {
        signin_crypto_init()
        var out = [UInt8](repeating: 0, count: 32)
        // OpenSSL caps scrypt's memory at 32 MiB unless told otherwise; allow what these parameters need.
        let maxmem = 129 * n * r * p + (1 << 20)
        var pw = passphrase.map { CChar(bitPattern: $0) } + [0]
        defer { for i in pw.indices { pw[i] = 0 } }
        let ok = salt.withUnsafeBufferPointer { s in EVP_PBE_scrypt(pw, passphrase.count, s.baseAddress, s.count, n, r, p, maxmem, &out, out.count) }
        guard ok == 1 else { throw .system(reason: "OpenSSL could not derive a key from the passphrase (scrypt)") }
        return out
    }

    package struct Sealed {
        package var nonce: [UInt8]
        package var ciphertext: [UInt8]
        package var tag: [UInt8]

        package init(nonce: [UInt8], ciphertext: [UInt8], tag: [UInt8]) {
            self.nonce = nonce
            self.ciphertext = ciphertext
            self.tag = tag
        }
    }

    package static func seal(_ plaintext: [UInt8], key: [UInt8], aad: [UInt8]) throws(SignInError) -> Sealed {
        signin_crypto_init()
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
    package static func open(_ sealed: Sealed, key: [UInt8], aad: [UInt8]) -> [UInt8]? {
        signin_crypto_init()
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
