import SignInBase
import SignInProtocol
import CSignInSystem
#if canImport(Glibc)
import Glibc
#endif

/// The Linux kernel keyring as the cache of an unlocked store key: a "user" key in the user keyring (@u), so it
/// lasts across commands even in a shell that has no session keyring of its own (sshd and su without
/// `pam_keyinit`), readable, findable and replaceable only by this uid (not by another uid that shares the session
/// keyring), expiring by itself.
enum KernelKeyring {
    /// The cached key of that name, or nil. A key of that name that another uid put there is ignored and reported
    /// once (it is not ours, so it says nothing about the store).
    package static func read(_ description: String, notice: (String) -> Void) -> [UInt8]? {
        var foreign: UInt32 = 0
        let id = signin_kernel_key_find(description, &foreign)
        if id == -2 {
            notice("ignored a kernel key named \(description) that uid \(foreign) put in your keyring, not signin; the store key is unlocked from where it is kept.")
            return nil
        }
        guard id >= 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 64)
        let n = signin_kernel_key_read(id, &buffer, UInt(buffer.count))
        defer { buffer.withUnsafeMutableBytes { Posix.zero($0) } }
        guard n == 32 else { return nil }
        return Array(buffer.prefix(32))
    }

    /// Holds `key` for `seconds`. Where the kernel keyring is refused (container seccomp profiles often block
    /// it), says so once per store (a marker file) and goes on without the cache.
    package static func add(_ description: String, _ key: [UInt8], seconds: Int, directory: String, notice: (String) -> Void) {
        let id = key.withUnsafeBytes { signin_kernel_key_add(description, $0.baseAddress, UInt($0.count), UInt32(min(seconds, Int(UInt32.max)))) }
        guard id < 0 else { return }
        let marker = directory + "/kernel-keyring-unavailable"
        if Posix.access(marker, F_OK) != 0 {
            notice("the kernel keyring is not available here (\(SystemError(code: Int32(truncatingIfNeeded: -id)))); the key will be unlocked on every use.")
            _ = try? FileIO.writeAtomically([], to: marker)
        }
    }

    /// Forgets the key of that name (and a copy an earlier signin kept in the session keyring); true when one was held.
    @discardableResult
    package static func remove(_ description: String) -> Bool {
        let legacy = signin_kernel_key_remove_legacy(description) == 0
        let id = signin_kernel_key_find(description, nil)
        guard id >= 0 else { return legacy }
        return signin_kernel_key_remove(id) == 0 || legacy
    }
}
