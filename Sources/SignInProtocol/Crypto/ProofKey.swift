import SignInBase
import SignInTransport
import CSignInOpenSSL
import FoundationEssentials

/// An ES256 (ECDSA P-256 with SHA-256) private key that proves possession of a grant (DPoP, RFC 9449): made by
/// OpenSSL and kept in the entry, encrypted under the store key, or made inside the TPM, which never lets it out
/// (the entry keeps only the TPM's wrapped blob, which loads on that TPM alone). Callers get signatures.
package struct ProofKey: Sendable, Equatable {
    /// Where the private key is.
    package enum Custody: Sendable, Equatable {
        /// OpenSSL's DER (SEC1 `ECPrivateKey`).
        case software(der: [UInt8])
        /// The TPM's blob of a key made inside it.
        case tpm(blob: [UInt8])
    }
    package let custody: Custody
    /// The public point's affine coordinates (32 bytes each).
    package let x: [UInt8]
    let y: [UInt8]

    /// The software key's DER; nil for a key in the TPM.
    var der: [UInt8]? {
        if case .software(let der) = custody { return der }
        return nil
    }

    /// A new key inside the TPM at `device`.
    package static func generateInTPM(device: String) throws(SignInError) -> ProofKey {
        do throws(TPM.Failure) {
            let made = try TPM.createSigningKey(device: device)
            return ProofKey(custody: .tpm(blob: made.blob), x: made.x, y: made.y)
        } catch {
            throw .system(reason: "the TPM (\(device)) did not make the DPoP key: \(error.message)")
        }
    }

    private init(custody: Custody, x: [UInt8], y: [UInt8]) {
        self.custody = custody
        self.x = x
        self.y = y
    }

    /// How the entry keeps the key: base64 of the DER, or `tpm:` and base64 of x, y and the TPM's blob.
    package var stored: String {
        switch custody {
        case .software(let der): return Data(der).base64EncodedString()
        case .tpm(let blob): return Self.tpmPrefix + Data(x + y + blob).base64EncodedString()
        }
    }

    private static let tpmPrefix = "tpm:"

    /// Whether the key an entry keeps (`stored`) was made inside the TPM, read without parsing it.
    package static func isInTPM(stored: String) -> Bool { stored.hasPrefix(tpmPrefix) }

    /// The key an entry keeps (`StoredCredentials.dpopKey`): nil for a bearer grant; a key that does not parse is
    /// an error that says so (every use: refresh, revocation, proofs).
    package static func fromEntry(_ stored: String?) throws(SignInError) -> ProofKey? {
        guard let stored else { return nil }
        guard let key = ProofKey(stored: stored) else { throw .system(reason: "the account's DPoP key in the store does not parse; sign in again") }
        return key
    }

    /// The key the entry keeps (`stored`); nil when it does not parse.
    package init?(stored: String) {
        if Self.isInTPM(stored: stored) {
            guard let bytes = Data(base64Encoded: String(stored.dropFirst(Self.tpmPrefix.count))), bytes.count > 64 else { return nil }
            let b = Array(bytes)
            self.init(custody: .tpm(blob: Array(b[64...])), x: Array(b[0..<32]), y: Array(b[32..<64]))
        } else {
            guard let der = Data(base64Encoded: stored) else { return nil }
            self.init(der: Array(der))
        }
    }

    /// A new key from OpenSSL's CSPRNG.
    package static func generate() throws(SignInError) -> ProofKey {
        signin_crypto_init()
        defer { ERR_clear_error() }
        guard let ctx = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else { throw .system(reason: "OpenSSL could not make an EC key context") }
        defer { EVP_PKEY_CTX_free(ctx) }
        var pkey: OpaquePointer?
        guard EVP_PKEY_keygen_init(ctx) == 1, EVP_PKEY_CTX_set_group_name(ctx, signin_group_p256()) == 1,
              EVP_PKEY_generate(ctx, &pkey) == 1, let pkey else { throw .system(reason: "OpenSSL could not make a P-256 key") }
        defer { EVP_PKEY_free(pkey) }
        var out: UnsafeMutablePointer<UInt8>?
        let len = i2d_PrivateKey(pkey, &out)
        guard len > 0, let out else { throw .system(reason: "OpenSSL could not write the P-256 key") }
        let der = Array(UnsafeBufferPointer(start: out, count: Int(len)))
        out.update(repeating: 0, count: Int(len))
        signin_openssl_free(out)
        guard let key = ProofKey(der: der) else { throw .system(reason: "OpenSSL could not read back the P-256 key") }
        return key
    }

    /// The key `der` holds; nil unless it is a P-256 private key.
    package init?(der: [UInt8]) {
        signin_crypto_init()
        defer { ERR_clear_error() }
        guard let pkey = Self.load(der) else { return nil }
        defer { EVP_PKEY_free(pkey) }
        var point = [UInt8](repeating: 0, count: 65)
        var n = 0
        guard EVP_PKEY_get_octet_string_param(pkey, signin_param_pub(), &point, point.count, &n) == 1, n == 65, point[0] == 4 else { return nil }
        custody = .software(der: der)
        x = Array(point[1..<33])
        y = Array(point[33..<65])
    }

    private static func load(_ der: [UInt8]) -> OpaquePointer? {
        der.withUnsafeBufferPointer { buf -> OpaquePointer? in
            var p: UnsafePointer<UInt8>? = buf.baseAddress
            guard let pkey = d2i_AutoPrivateKey(nil, &p, buf.count) else { return nil }
            guard EVP_PKEY_is_a(pkey, "EC") == 1, EVP_PKEY_get_bits(pkey) == 256 else {
                EVP_PKEY_free(pkey)
                return nil
            }
            return pkey
        }
    }

    /// The JWS signature of `message`: raw r||s, 64 bytes (RFC 7518 3.4). A key in the TPM signs there (the TPM
    /// that `TSS2_TCTI`, `TPM2TOOLS_TCTI` or `/dev/tpmrm0` names).
    func sign(_ message: [UInt8]) throws(SignInError) -> [UInt8] {
        switch custody {
        case .software(let der): return try Self.signInSoftware(message, der: der)
        case .tpm(let blob):
            guard let device = TPM.device() else {
                throw .system(reason: "the grant's DPoP key is in a TPM, and none is reachable here (no /dev/tpmrm0; set TSS2_TCTI to name one)")
            }
            do throws(TPM.Failure) { return try TPM.sign(digest: Crypto.sha256(message), blob: blob, device: device) } catch {
                throw .system(reason: "the TPM (\(device)) did not sign the DPoP proof: \(error.message)")
            }
        }
    }

    private static func signInSoftware(_ message: [UInt8], der: [UInt8]) throws(SignInError) -> [UInt8] {
        signin_crypto_init()
        defer { ERR_clear_error() }
        guard let pkey = Self.load(der), let md = EVP_MD_CTX_new() else { throw .system(reason: "OpenSSL could not load the proof key") }
        defer { EVP_PKEY_free(pkey); EVP_MD_CTX_free(md) }
        var length = 0
        guard EVP_DigestSignInit(md, nil, EVP_sha256(), nil, pkey) == 1, EVP_DigestSign(md, nil, &length, message, message.count) == 1 else {
            throw .system(reason: "OpenSSL could not sign with the proof key")
        }
        var der = [UInt8](repeating: 0, count: length)
        guard EVP_DigestSign(md, &der, &length, message, message.count) == 1 else { throw .system(reason: "OpenSSL could not sign with the proof key") }
        guard let raw = Self.rawSignature(Array(der.prefix(length))) else { throw .system(reason: "OpenSSL wrote a signature signin cannot read") }
        return raw
    }

    /// DER `SEQUENCE { INTEGER r, INTEGER s }` as r||s, each left-padded to 32 bytes (OpenSSL's ECDSA_SIG, as
    /// `VerificationKey` builds the other way).
    static func rawSignature(_ der: [UInt8]) -> [UInt8]? {
        der.withUnsafeBufferPointer { buf -> [UInt8]? in
            var p: UnsafePointer<UInt8>? = buf.baseAddress
            guard let sig = d2i_ECDSA_SIG(nil, &p, buf.count) else { return nil }
            defer { ECDSA_SIG_free(sig) }
            var raw = [UInt8](repeating: 0, count: 64)
            let written = raw.withUnsafeMutableBufferPointer { out in
                BN_bn2binpad(ECDSA_SIG_get0_r(sig), out.baseAddress, 32) == 32 && BN_bn2binpad(ECDSA_SIG_get0_s(sig), out.baseAddress! + 32, 32) == 32
            }
            return written ? raw : nil
        }
    }
}
