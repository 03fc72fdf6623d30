import SignInBase
import SignInTransport
import CSignInSystem
import Dispatch
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// The machine's TPM 2.0, for sealing the store key to it (`key_storage` `tpm` and `tpm+passphrase`). The TSS
/// libraries are loaded on first use; nothing here runs on a cached command, whose key the kernel keyring holds.
package enum TPM {
    /// Why the TPM did not give what was asked.
    package struct Failure: Error {
        package enum Kind { case unavailable, failed, damaged, otherTPM, wrongPassphrase, lockedOut, full }
        package let kind: Kind
        package let message: String
    }

    /// The TPM as the TSS names it: `TSS2_TCTI`, else `TPM2TOOLS_TCTI`, else the kernel's resource manager when
    /// `/dev/tpmrm0` exists; nil when none of these says there is one.
    package static func device(environment: (String) -> String? = { Posix.getenv($0) }) -> String? {
        for name in ["TSS2_TCTI", "TPM2TOOLS_TCTI"] {
            if let v = environment(name), !v.isEmpty { return v }
        }
        return Posix.access("/dev/tpmrm0", F_OK) == 0 ? "device:/dev/tpmrm0" : nil
    }

    /// Nil when the TPM at `device` answers and makes its storage key; else why not.
    package static func problem(device: String) -> String? {
        do throws(Failure) {
            return try withDeadline(device) { () -> Result<String?, Failure> in
                var error: UnsafeMutablePointer<CChar>?
                defer { Posix.free(error) }
                return .success(signin_tpm_probe(device, &error) == 0 ? nil : text(error))
            }
        } catch {
            return error.message
        }
    }

    /// `secret` sealed to the TPM at `device`, under `auth` (a password the TPM checks, with its lockout) when not empty.
    package static func seal(_ secret: [UInt8], auth: [UInt8], device: String) throws(Failure) -> [UInt8] {
        try withDeadline(device) { Result { () throws(Failure) in try bytes { signin_tpm_seal(device, secret, secret.count, auth, auth.count, &$0, &$1, &$2) } } }
    }

    /// What `seal` sealed, from the same TPM and with the same `auth`.
    package static func unseal(_ blob: [UInt8], auth: [UInt8], device: String) throws(Failure) -> [UInt8] {
        try withDeadline(device) { Result { () throws(Failure) in try bytes { signin_tpm_unseal(device, blob, blob.count, auth, auth.count, &$0, &$1, &$2) } } }
    }

    /// A new ECDSA P-256 key made inside the TPM at `device`: the TPM's wrapped blob and the public point.
    static func createSigningKey(device: String) throws(Failure) -> (blob: [UInt8], x: [UInt8], y: [UInt8]) {
        let made = try withDeadline(device) { () -> Result<[[UInt8]], Failure> in
            var x = [UInt8](repeating: 0, count: 32), y = [UInt8](repeating: 0, count: 32)
            return Result { () throws(Failure) in
                let blob = try bytes { signin_tpm_create_signing_key(device, &$0, &$1, &x, &y, &$2) }
                return [blob, x, y]
            }
        }
        return (made[0], made[1], made[2])
    }

    /// The ES256 signature (r||s) of `digest` (SHA-256) by the key `createSigningKey` made, signed in the TPM.
    static func sign(digest: [UInt8], blob: [UInt8], device: String) throws(Failure) -> [UInt8] {
        try withDeadline(device) { () -> Result<[UInt8], Failure> in
            var r = [UInt8](repeating: 0, count: 32), s = [UInt8](repeating: 0, count: 32)
            var error: UnsafeMutablePointer<CChar>?
            defer { Posix.free(error) }
            let rc = signin_tpm_sign(device, blob, blob.count, digest, &r, &s, &error)
            guard rc == 0 else { return .failure(failure(rc, error)) }
            return .success(r + s)
        }
    }

    /// How long one TPM operation may take (`SIGNIN_TPM_TIMEOUT_SECONDS`, default 20 s): a TPM answers in
    /// milliseconds, a key's creation in seconds.
    package static var timeoutSeconds: Int {
        guard let t = ProcessEnvironment.value("SIGNIN_TPM_TIMEOUT_SECONDS").flatMap({ Int($0) }), (1...3600).contains(t) else { return 20 }
        return t
    }

    /// Runs one TPM operation on a thread of its own and waits for it at most `timeoutSeconds`: a TPM (or a TCTI
    /// socket) that never answers, or trickles, cannot hold signin (its connection and its descriptor go with the
    /// process). A late answer is dropped.
    private static func withDeadline<T: Sendable>(_ device: String, _ work: @escaping @Sendable () -> Result<T, Failure>) throws(Failure) -> T {
        let done = DispatchSemaphore(value: 0)
        let box = Locked<Result<T, Failure>?>(nil)
        DedicatedThread.start {
            let result = work()
            box.withLock { $0 = result }
            done.signal()
        }
        let seconds = timeoutSeconds
        guard done.wait(timeout: .now() + .seconds(seconds)) == .success, let result = box.withLock({ $0 }) else {
            throw Failure(kind: .unavailable, message: "the TPM (\(device)) did not answer within \(seconds) s (SIGNIN_TPM_TIMEOUT_SECONDS)")
        }
        return try result.get()
    }

    /// The bytes a shim call hands back (freed and wiped here), or its failure.
    private static func bytes(_ call: (inout UnsafeMutablePointer<UInt8>?, inout Int, inout UnsafeMutablePointer<CChar>?) -> Int32) throws(Failure) -> [UInt8] {
        var out: UnsafeMutablePointer<UInt8>?
        var count = 0
        var error: UnsafeMutablePointer<CChar>?
        defer { Posix.free(error); signin_tpm_free(out, count) }
        let rc = call(&out, &count, &error)
        guard rc == 0, let out else { throw failure(rc, error) }
        return Array(UnsafeBufferPointer(start: out, count: count))
    }

    private static func text(_ error: UnsafeMutablePointer<CChar>?) -> String { error.map { String(cString: $0) } ?? "unknown TPM error" }

    private static func failure(_ rc: Int32, _ error: UnsafeMutablePointer<CChar>?) -> Failure {
        Failure(kind: kind(rc), message: text(error))
    }

    /// What a failed TPM2_Load's response code says (tpm.c's `signin_tpm_load_failure`): `.otherTPM` only for an
    /// integrity or binding failure, `.unavailable` when the TPM could not answer (a TSS layer's error, a warning),
    /// `.failed` otherwise. Only `.otherTPM` is ever told to sign out.
    package static func loadFailure(_ responseCode: UInt32) -> Failure.Kind { kind(signin_tpm_load_failure(responseCode)) }

    private static func kind(_ rc: Int32) -> Failure.Kind {
        let kind: Failure.Kind
        switch rc {
        case Int32(SIGNIN_TPM_UNAVAILABLE): kind = .unavailable
        case Int32(SIGNIN_TPM_DAMAGED): kind = .damaged
        case Int32(SIGNIN_TPM_OTHER_TPM): kind = .otherTPM
        case Int32(SIGNIN_TPM_WRONG_AUTH): kind = .wrongPassphrase
        case Int32(SIGNIN_TPM_LOCKED_OUT): kind = .lockedOut
        case Int32(SIGNIN_TPM_FULL): kind = .full
        default: kind = .failed
        }
        return kind
    }
}
