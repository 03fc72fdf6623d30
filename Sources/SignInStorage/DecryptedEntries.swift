import SignInBase
import SignInProtocol
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Entries already decrypted by this process, with what their file looked like then: a file that has not changed
/// (same inode, size and modification time) is not decrypted again (`currentUser`, `hasPreviousSignIn`).
final class DecryptedEntries: Sendable {
    struct FileIdentity: Equatable {
        let inode: UInt64
        let size: Int64
        let modified: Int64
        let modifiedNanoseconds: Int64
    }

    private let entries = Locked<[String: (FileIdentity, StoredCredentials)]>([:])

    package static func identity(_ path: String) -> FileIdentity? {
        guard case .success(let st) = Posix.status(ofLink: path) else { return nil }
        return FileIdentity(inode: st.inode, size: Int64(st.size), modified: Int64(st.modified.seconds), modifiedNanoseconds: Int64(st.modified.nanoseconds))
    }

    package func lookup(_ path: String, _ id: FileIdentity) -> StoredCredentials? {
        entries.withLock { $0[path].flatMap { $0.0 == id ? $0.1 : nil } }
    }

    func remember(_ path: String, _ id: FileIdentity, _ creds: StoredCredentials) {
        entries.withLock { $0[path] = (id, creds) }
    }
}
