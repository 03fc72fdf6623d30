import SignInBase
import SignInProtocol
import FoundationEssentials

/// The key sealed to this machine's TPM 2.0 (unsealed without a prompt here, useless on any other machine); with a
/// passphrase, under the passphrase's scrypt key, which the TPM itself checks (its lockout counts the tries).
struct TPMKey: KeyPlace {
    let withPassphrase: Bool

    func words(_ key: StoreKey) -> String { withPassphrase ? "sealed to the TPM under a passphrase" : "sealed to the TPM" }

    func describe(_ d: StoreKey.Descriptor, _ key: StoreKey) -> String {
        (withPassphrase ? "sealed to this machine's TPM under a passphrase" : "sealed to this machine's TPM") + " (\(key.descriptorPath))"
    }

    /// The key unsealed by this machine's TPM; for `tpm+passphrase`, under the passphrase's scrypt key, which the
    /// TPM checks (three tries, as for `passphrase`; the TPM's lockout counts them too).
    func unwrap(_ d: StoreKey.Descriptor, path: String, passphrase known: String?, _ key: StoreKey) throws(SignInError) -> [UInt8] {
        guard let blob = d.sealed.flatMap({ Data(base64Encoded: $0) }) else { throw .storeUnreadable(path: path, reason: "its TPM-sealed key is damaged; left as is") }
        guard let device = key.custody.tpmDevice else {
            throw .storeUnreadable(path: path, reason: "the key is sealed to a TPM, and none is reachable here (no /dev/tpmrm0; set TSS2_TCTI to name one); the credentials are untouched")
        }
        func attempt(_ passphrase: String?) throws(SignInError) -> [UInt8]? {
            var auth: [UInt8] = []
            if let passphrase {
                guard let kdf = d.kdf, let salt = kdf.checkedSalt else {
                    throw .storeUnreadable(path: path, reason: "its passphrase parameters are damaged; left as is")
                }
                auth = try kdf.derive(passphrase, salt: salt)
            }
            let unsealed: [UInt8]
            do throws(TPM.Failure) {
                unsealed = try TPM.unseal(Array(blob), auth: auth, device: device)
            } catch {
                switch error.kind {
                case .wrongPassphrase where passphrase != nil: return nil
                case .otherTPM:
                    throw .storeUnreadable(path: path, reason: "the key is sealed to another TPM: this folder was copied from another machine (or this TPM was cleared), and its credentials cannot be opened here. They are left as they are; `signin logout` removes them here (then sign in again), or use them on the machine they came from")
                case .unavailable:
                    throw .storeUnreadable(path: path, reason: "the key is sealed to the TPM (\(device)), which cannot be reached: \(error.message); the credentials are untouched")
                default:
                    throw .storeUnreadable(path: path, reason: "the TPM (\(device)) did not unseal the key: \(error.message); the credentials are untouched")
                }
            }
            guard unsealed.count == 32 else { throw .storeUnreadable(path: path, reason: "the TPM gave back a key of \(unsealed.count) bytes; left as is") }
            return unsealed
        }
        guard withPassphrase else {
            if let unsealed = try attempt(nil) { return unsealed }
            throw .storeUnreadable(path: path, reason: "the TPM asks for a passphrase this store does not have; left as is")
        }
        if let known {
            if let unsealed = try attempt(known) { return unsealed }
            throw .passphraseRefused(reason: "the new passphrase does not unseal the key written with it (\(path))")
        }
        for n in 1...3 {
            guard let passphrase = key.custody.passphrase?(.unlock(attempt: n)) else {
                if n > 1 { break }
                throw .passphraseUnavailable(path: path)
            }
            if let unsealed = try attempt(passphrase) { return unsealed }
        }
        throw .passphraseRefused(reason: "wrong passphrase for \(path); nothing was changed")
    }

    func write(_ bytes: [UInt8], file: String, descriptor: String, id: String, passphrase: String?, _ key: StoreKey) throws(SignInError) -> StoreKey.Descriptor? {
        guard let device = key.custody.tpmDevice else {
            throw .storeUnwritable(path: descriptor, reason: "no TPM is reachable here (no /dev/tpmrm0; set TSS2_TCTI to name one)")
        }
        var kdf: StoreKey.Descriptor.KDF?
        var auth: [UInt8] = []
        if withPassphrase {
            guard let passphrase else { throw .passphraseRefused(reason: "no passphrase for the new key") }
            (auth, kdf) = try StoreKey.Descriptor.KDF.new(for: passphrase)
        }
        let blob: [UInt8]
        do throws(TPM.Failure) { blob = try TPM.seal(bytes, auth: auth, device: device) } catch {
            throw .storeUnwritable(path: descriptor, reason: "the TPM (\(device)) did not seal the key: \(error.message)")
        }
        let d = StoreKey.Descriptor(storage: withPassphrase ? .tpmPassphrase : .tpm, id: id, kdf: kdf, wrapped: nil, sealed: Data(blob).base64EncodedString())
        try key.writeDescriptor(d, to: descriptor)
        return d
    }
}
