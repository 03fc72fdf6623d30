import SignInBase
import SignInProtocol

/// One place the store key can be kept (`key_storage`), one type each: a file, the Secret Service, a passphrase,
/// the TPM, the TPM under a passphrase. `StoreKey` finds the key (`key` or `key.json`), keeps it in the kernel keyring,
/// moves and destroys it; what differs by place is here: how a kept key is named, read back, written and forgotten.
protocol KeyPlace {
    /// The place as a refusal names it ("in the Secret Service").
    func words(_ key: StoreKey) -> String
    /// A key kept here, as `status` says it (without the note on the kernel cache).
    func describe(_ d: StoreKey.Descriptor, _ key: StoreKey) -> String
    /// The key `d` describes, read from here (no kernel cache); `passphrase` when it is known already.
    func unwrap(_ d: StoreKey.Descriptor, path: String, passphrase: String?, _ key: StoreKey) throws(SignInError) -> [UInt8]
    /// Puts `bytes` here: the material, then its descriptor at `descriptor` (written last, atomically, so a crash
    /// before it leaves the store as it was). Nil for a key with no descriptor (a file).
    func write(_ bytes: [UInt8], file: String, descriptor: String, id: String, passphrase: String?, _ key: StoreKey) throws(SignInError) -> StoreKey.Descriptor?
    /// Drops a described key's material outside the folder (the Secret Service item); the kernel's copy is dropped by
    /// `StoreKey`.
    func forget(_ d: StoreKey.Descriptor)
}

extension KeyPlace {
    func forget(_ d: StoreKey.Descriptor) {}
    func unwrap(_ d: StoreKey.Descriptor, path: String, passphrase: String?, _ key: StoreKey) throws(SignInError) -> [UInt8] {
        throw .storeUnreadable(path: path, reason: "does not describe a key this signin knows; left as is")
    }
}

extension KeyStorage {
    /// Where a key of this storage is kept (`auto` writes a file, as it falls back to one).
    var place: any KeyPlace {
        switch self {
        case .file, .auto: return FileKey()
        case .secretService: return SecretServiceKey()
        case .passphrase: return PassphraseKey()
        case .tpm: return TPMKey(withPassphrase: false)
        case .tpmPassphrase: return TPMKey(withPassphrase: true)
        }
    }
}
