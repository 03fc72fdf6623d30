import CSystem
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// The machine's TPM 2.0, for sealing the store key to it (`key_storage` `tpm` and `tpm+passphrase`). The TSS
/// libraries are loaded on first use; nothing here runs on a cached command, whose key the kernel keyring holds.
enum TPM {
    /// Why the TPM did not give what was asked.
    struct Failure: Error {
        enum Kind { case unavailable, failed, damaged, otherTPM, wrongPassphrase, lockedOut }
        let kind: Kind
        let message: String
    }

    /// The TPM as the TSS names it: `TSS2_TCTI`, else `TPM2TOOLS_TCTI`, else the kernel's resource manager when
    /// `/dev/tpmrm0` exists; nil when none of these says there is one.
    static func device(environment: (String) -> String? = { getenv($0).map { String(cString: $0) } }) -> String? {
        for name in ["TSS2_TCTI", "TPM2TOOLS_TCTI"] {
            if let v = environment(name), !v.isEmpty { return v }
        }
        return access("/dev/tpmrm0", F_OK) == 0 ? "device:/dev/tpmrm0" : nil
    }

    /// Nil when the TPM at `device` answers and makes its storage key; else why not.
    static func problem(device: String) -> String? {
        var error: UnsafeMutablePointer<CChar>?
        defer { free(error) }
        return signin_tpm_probe(device, &error) == 0 ? nil : text(error)
    }

    /// `secret` sealed to the TPM at `device`, under `auth` (a password the TPM checks, with its lockout) when not empty.
    static func seal(_ secret: [UInt8], auth: [UInt8], device: String) throws(Failure) -> [UInt8] {
        var blob: UnsafeMutablePointer<UInt8>?
        var count = 0
        var error: UnsafeMutablePointer<CChar>?
        defer { free(error); signin_tpm_free(blob, count) }
        let rc = signin_tpm_seal(device, secret, secret.count, auth, auth.count, &blob, &count, &error)
        guard rc == 0, let blob else { throw failure(rc, error) }
        return Array(UnsafeBufferPointer(start: blob, count: count))
    }

    /// What `seal` sealed, from the same TPM and with the same `auth`.
    static func unseal(_ blob: [UInt8], auth: [UInt8], device: String) throws(Failure) -> [UInt8] {
        var secret: UnsafeMutablePointer<UInt8>?
        var count = 0
        var error: UnsafeMutablePointer<CChar>?
        defer { free(error); signin_tpm_free(secret, count) }
        let rc = signin_tpm_unseal(device, blob, blob.count, auth, auth.count, &secret, &count, &error)
        guard rc == 0, let secret else { throw failure(rc, error) }
        return Array(UnsafeBufferPointer(start: secret, count: count))
    }

    private static func text(_ error: UnsafeMutablePointer<CChar>?) -> String { error.map { String(cString: $0) } ?? "unknown TPM error" }

    private static func failure(_ rc: Int32, _ error: UnsafeMutablePointer<CChar>?) -> Failure {
        let kind: Failure.Kind
        switch rc {
        case Int32(SIGNIN_TPM_UNAVAILABLE): kind = .unavailable
        case Int32(SIGNIN_TPM_DAMAGED): kind = .damaged
        case Int32(SIGNIN_TPM_OTHER_TPM): kind = .otherTPM
        case Int32(SIGNIN_TPM_WRONG_AUTH): kind = .wrongPassphrase
        case Int32(SIGNIN_TPM_LOCKED_OUT): kind = .lockedOut
        default: kind = .failed
        }
        return Failure(kind: kind, message: text(error))
    }
}
