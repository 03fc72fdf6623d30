import SignInBase
import FoundationEssentials

/// The key a passphrase derives with scrypt, for the two places that keep the store key under one (`PassphraseKey`
/// wraps it, `TPMKey` gives it to the TPM as the sealed key's authorization).
extension StoreKey.Descriptor.KDF {
    /// A fresh salt and signin's cost (`StoreKey.scryptN`, `scryptR`, `scryptP`): the key `passphrase` derives, and the
    /// parameters to keep beside what it protects.
    static func new(for passphrase: String) throws(SignInError) -> (key: [UInt8], kdf: Self) {
        let salt = try Crypto.randomBytes(16)
        let key = try Crypto.scrypt(passphrase: Array(passphrase.utf8), salt: salt, n: StoreKey.scryptN, r: StoreKey.scryptR, p: StoreKey.scryptP)
        return (key, Self(name: "scrypt", n: StoreKey.scryptN, r: StoreKey.scryptR, p: StoreKey.scryptP, salt: Data(salt).base64EncodedString()))
    }

    /// The salt, when these are scrypt parameters within what signin writes (never a cost a tampered file could make
    /// unbounded); nil otherwise.
    var checkedSalt: [UInt8]? {
        guard name == "scrypt", let salt = Data(base64Encoded: salt), n <= 1 << 22, r <= 32, p <= 16 else { return nil }
        return Array(salt)
    }

    /// The key `passphrase` derives under these parameters (`checkedSalt` first).
    func derive(_ passphrase: String, salt: [UInt8]) throws(SignInError) -> [UInt8] {
        try Crypto.scrypt(passphrase: Array(passphrase.utf8), salt: salt, n: n, r: r, p: p)
    }
}
