import SignInBase
import SignInProtocol
import FoundationEssentials

/// The key wrapped (AES-256-GCM) under a key derived from a passphrase with scrypt; three tries to unlock it.
struct PassphraseKey: KeyPlace {
    func words(_ key: StoreKey) -> String { "under a passphrase" }

    func describe(_ d: StoreKey.Descriptor, _ key: StoreKey) -> String { "under a passphrase (\(key.descriptorPath))" }

    func unwrap(_ d: StoreKey.Descriptor, path: String, passphrase known: String?, _ key: StoreKey) throws(SignInError) -> [UInt8] {
        guard let kdf = d.kdf, let salt = kdf.checkedSalt, let wrapped = d.wrapped.flatMap({ Data(base64Encoded: $0) }), wrapped.count == 12 + 16 + 32 else {
            throw .storeUnreadable(path: path, reason: "its passphrase wrapping is damaged; left as is")
        }
        let bytes = Array(wrapped)
        let sealed = Crypto.Sealed(nonce: Array(bytes[0..<12]), ciphertext: Array(bytes[28...]), tag: Array(bytes[12..<28]))
        let aad = Array("signin-key-v1\u{0}\(d.id)".utf8)
        if let known {
            let kek = try kdf.derive(known, salt: salt)
            if let key = Crypto.open(sealed, key: kek, aad: aad) { return key }
            throw .passphraseRefused(reason: "the new passphrase does not unlock the key written with it (\(path))")
        }
        for attempt in 1...3 {
            guard let passphrase = key.custody.passphrase?(.unlock(attempt: attempt)) else {
                if attempt > 1 { break }  // a script's descriptor gives one passphrase, and it was wrong
                throw .passphraseUnavailable(path: path)
            }
            let kek = try kdf.derive(passphrase, salt: salt)
            if let key = Crypto.open(sealed, key: kek, aad: aad) { return key }
        }
        throw .passphraseRefused(reason: "wrong passphrase for \(path); nothing was changed")
    }

    func write(_ bytes: [UInt8], file: String, descriptor: String, id: String, passphrase: String?, _ key: StoreKey) throws(SignInError) -> StoreKey.Descriptor? {
        guard let passphrase else { throw .passphraseRefused(reason: "no passphrase for the new key") }
        let (kek, kdf) = try StoreKey.Descriptor.KDF.new(for: passphrase)
        let sealed = try Crypto.seal(bytes, key: kek, aad: Array("signin-key-v1\u{0}\(id)".utf8))
        let d = StoreKey.Descriptor(storage: .passphrase, id: id, kdf: kdf, wrapped: Data(sealed.nonce + sealed.tag + sealed.ciphertext).base64EncodedString())
        try key.writeDescriptor(d, to: descriptor)
        return d
    }
}
