import SignInBase
import CSignInSystem
#if canImport(Glibc)
import Glibc
#endif

/// Who is at the other end of a Unix socket, as the kernel says (`SO_PEERCRED`): what the agent answers by.
package struct PeerCredentials: Equatable, Sendable {
    package let pid: Int32
    package let uid: UInt32
    let gid: UInt32

    package static func of(_ fd: Int32) -> PeerCredentials? {
        var pid: Int32 = 0
        var uid: UInt32 = 0, gid: UInt32 = 0
        guard signin_peer_credentials(fd, &pid, &uid, &gid) == 0 else { return nil }
        return PeerCredentials(pid: pid, uid: uid, gid: gid)
    }
}
