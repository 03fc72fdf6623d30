import SignInBase
import SignInProtocol
import CSignInSystem
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Decrypted entries held in the kernel keyring beside the unlocked key, so that a cached `signin token` or
/// `whoami` reads its entry with no decryption (OpenSSL's first cipher use builds its whole method store: most of
/// a cached call's instructions).
///
/// - Only while keys are cached at all (`key_cache_seconds` > 0), as "user" keys in the user keyring readable by
///   this uid alone (as the key is), never longer than the key: a key kept elsewhere is cached there already, and
///   its entries expire no later than it; a `file` key is readable from the folder by the same uid, and its
///   entries last `key_cache_seconds`.
/// - Each holds the plaintext with the identity of the file it was read from or written to (inode, size,
///   modification time): a file that changed since (a refresh by another process, a move, a sign-out) is not
///   answered from the kernel. The file's name is the account's keyed name, so only this store key finds it.
/// - `signin lock`, a key move, signing out and destroying the store remove them.
struct KernelEntries: Sendable {
    /// `signin:entries:<tag of the store folder>:`; a hash of the folder's path, so `lock` needs no key to find them.
    package let prefix: String
    /// Whether the configuration lets anything be cached in the kernel.
    let enabled: Bool

    private static let magic: [UInt8] = Array("SGE1".utf8)
    private static let headerSize = 4 + 8 * 4

    init(directory: String, cacheSeconds: Int) {
        let tag = SipHash.hash128(key: Array("signin-kernel-entries-v1".utf8.prefix(16)), Array(directory.utf8))
        prefix = "signin:entries:\(Hex.encode(tag)):"
        enabled = cacheSeconds > 0
    }

    /// The plaintext held for the file `name` while it is still `identity`.
    package func lookup(_ name: String, _ identity: DecryptedEntries.FileIdentity) -> [UInt8]? {
        guard enabled else { return nil }
        let id = signin_kernel_key_find(prefix + name, nil)
        guard id >= 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 32768)
        let n = signin_kernel_key_read(id, &buffer, UInt(buffer.count))
        defer { buffer.withUnsafeMutableBytes { Posix.zero($0) } }
        guard n > Self.headerSize, n <= buffer.count, Array(buffer[0..<4]) == Self.magic, Self.header(identity) == Array(buffer[0..<Self.headerSize]) else { return nil }
        return Array(buffer[Self.headerSize..<n])
    }

    /// Holds `plaintext` of the file `name` as `identity` for `seconds` (nothing when not positive). Quietly nothing
    /// where the kernel refuses (a full quota, a container's seccomp profile): the file is decrypted next time.
    package func store(_ name: String, _ identity: DecryptedEntries.FileIdentity, _ plaintext: [UInt8], seconds: Int) {
        guard enabled, seconds > 0 else { return }
        var payload = Self.header(identity) + plaintext
        defer { payload.withUnsafeMutableBytes { Posix.zero($0) } }
        guard payload.count <= 32767 else { return }
        _ = payload.withUnsafeBytes { signin_kernel_key_add(prefix + name, $0.baseAddress, UInt($0.count), UInt32(min(seconds, Int(UInt32.max)))) }
    }

    /// Forgets the entry of the file `name`.
    package func remove(_ name: String) {
        let id = signin_kernel_key_find(prefix + name, nil)
        if id >= 0 { _ = signin_kernel_key_remove(id) }
    }

    /// Forgets every entry of this store; how many there were.
    @discardableResult
    package func removeAll() -> Int { max(0, signin_kernel_keys_remove_prefix(prefix)) }

    private static func header(_ i: DecryptedEntries.FileIdentity) -> [UInt8] {
        var out = magic
        for v in [i.inode, UInt64(bitPattern: i.size), UInt64(bitPattern: i.modified), UInt64(bitPattern: i.modifiedNanoseconds)] {
            withUnsafeBytes(of: v.littleEndian) { out += $0 }
        }
        return out
    }
}
