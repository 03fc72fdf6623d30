import SignInBase
import SignInProtocol

/// The key as a Secret Service item ("signin store key": GNOME Keyring, KWallet, KeePassXC), named by the store's ID.
struct SecretServiceKey: KeyPlace {
    func words(_ key: StoreKey) -> String { "in the Secret Service" }

    func describe(_ d: StoreKey.Descriptor, _ key: StoreKey) -> String { "Secret Service item \"signin store key\" (store \(d.id))" }

    func unwrap(_ d: StoreKey.Descriptor, path: String, passphrase: String?, _ key: StoreKey) throws(SignInError) -> [UInt8] {
        try SecretService.lookup(storeID: d.id, descriptorPath: path)
    }

    func write(_ bytes: [UInt8], file: String, descriptor: String, id: String, passphrase: String?, _ key: StoreKey) throws(SignInError) -> StoreKey.Descriptor? {
        try SecretService.store(storeID: id, key: bytes, directory: key.directory)
        let d = StoreKey.Descriptor(storage: .secretService, id: id, kdf: nil, wrapped: nil)
        try key.writeDescriptor(d, to: descriptor)
        return d
    }

    func forget(_ d: StoreKey.Descriptor) { try? SecretService.clear(storeID: d.id) }
}
