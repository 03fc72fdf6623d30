import SignInBase
import CSignInSystem
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Which local user opened a loopback TCP connection, so the listener answers only the person signing in.
///
/// Linux has no `SO_PEERCRED` for TCP, but the kernel knows each socket's owner. The client's end of an accepted
/// connection is the socket whose local address is our peer's and whose remote address is ours. Only an
/// established one counts: a client that sent its request and closed before we accepted leaves a time-wait
/// socket, which belongs to no process and which the kernel reports as uid 0 (root's listener would take it for
/// its own user), so such a connection is refused whoever runs signin. It is asked of the kernel by that exact identity (NETLINK_SOCK_DIAG, a few microseconds),
/// and found in `/proc/net/tcp` (IPv4) or `/proc/net/tcp6`, whose `uid` column names the owner, where netlink
/// is refused (reading that table costs milliseconds on a busy machine).
enum LoopbackPeer {
    /// The verdict for one accepted connection.
    enum Owner: Equatable {
        case uid(UInt32)
        /// Not found: the connection came through another network namespace (a container's port forward, WSL's
        /// relay), or `/proc` is not mounted. `reason` says which.
        case unknown(reason: String)
    }

    /// The owner of the client end of the accepted connection `fd`.
    package static func owner(ofAccepted fd: Int32) -> Owner {
        guard let peer = address(fd, peer: true), let local = address(fd, peer: false) else {
            return .unknown(reason: "the connection's addresses could not be read")
        }
        var uid: UInt32 = 0
        var state: UInt8 = 0
        switch signin_tcp_socket_uid(peer.isIPv6 ? AF_INET6 : AF_INET, peer.raw, peer.port, local.raw, local.port, &uid, &state) {
        case 0: return state == Self.established ? .uid(uid) : .unknown(reason: Self.notEstablished)
        case 1: return .unknown(reason: "the client's socket is not known to this network namespace (another namespace?)")
        default: break  // netlink refused (a seccomp profile): the table
        }
        let table = peer.isIPv6 ? "/proc/net/tcp6" : "/proc/net/tcp"
        guard let data = try? FileIO.readStream(path: table, limit: 1 << 24) else {
            return .unknown(reason: "\(table) cannot be read")
        }
        return owner(in: data, client: peer.procText, server: local.procText) ?? .unknown(reason: "the client's socket is not in \(table) (another network namespace?)")
    }

    /// TCP_ESTABLISHED, the only state whose owner is a process.
    static let established: UInt8 = 1
    static let notEstablished = "the client's end is no longer an open connection (it closed before it was answered)"

    /// Finds the socket whose local end is `client` and remote end is `server` in a `/proc/net/tcp` table. Pure, for tests.
    package static func owner(in table: Data, client: String, server: String) -> Owner? {
        for line in table.split(separator: UInt8(ascii: "\n")).dropFirst() {
            let fields = line.split(separator: UInt8(ascii: " "))
            guard fields.count > 7 else { continue }
            guard ascii(fields[1]).uppercased() == client, ascii(fields[2]).uppercased() == server else { continue }
            guard UInt8(ascii(fields[3]), radix: 16) == established else { return .unknown(reason: notEstablished) }
            guard let uid = UInt32(ascii(fields[7])) else { return nil }
            return .uid(uid)
        }
        return nil
    }

    private static func ascii(_ bytes: Data.SubSequence) -> String { String(decoding: bytes, as: UTF8.self) }

    struct Address {
        let isIPv6: Bool
        /// The address bytes in network order (4 or 16) and the port, for the kernel query.
        package let raw: [UInt8]
        package let port: UInt16
        /// The address as `/proc/net/tcp*` prints it: each 32-bit word of the address in host byte order as
        /// eight hex digits, a colon, the port as four hex digits.
        let procText: String
    }

    package static func address(_ fd: Int32, peer: Bool) -> Address? {
        var st = sockaddr_storage()
        var len = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let rc = withUnsafeMutablePointer(to: &st) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { peer ? Posix.getpeername(fd, $0, &len) : Posix.getsockname(fd, $0, &len) }
        }
        guard rc == 0 else { return nil }
        let family = Int32(st.ss_family)
        return withUnsafePointer(to: &st) { p -> Address? in
            switch family {
            case AF_INET:
                return p.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { a in
                    let word = a.pointee.sin_addr.s_addr  // network order in memory, printed as a host-order integer
                    let port = UInt16(bigEndian: a.pointee.sin_port)
                    return Address(isIPv6: false, raw: withUnsafeBytes(of: a.pointee.sin_addr) { Array($0) }, port: port,
                                   procText: hex(UInt32(word), 8) + ":" + hex(UInt32(port), 4))
                }
            case AF_INET6:
                return p.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { a in
                    var words = ""
                    withUnsafeBytes(of: a.pointee.sin6_addr) { raw in
                        for i in 0..<4 { words += hex(raw.loadUnaligned(fromByteOffset: i * 4, as: UInt32.self), 8) }
                    }
                    let port = UInt16(bigEndian: a.pointee.sin6_port)
                    return Address(isIPv6: true, raw: withUnsafeBytes(of: a.pointee.sin6_addr) { Array($0) }, port: port,
                                   procText: words + ":" + hex(UInt32(port), 4))
                }
            default:
                return nil
            }
        }
    }

    /// Who listens on the loopback `port` of `family` (the holder of a port signin could not bind), asked of the
    /// kernel; nil when it cannot tell.
    static func listenerOwner(family: Int32, port: Int) -> UInt32? {
        let local: [UInt8] = family == AF_INET ? [127, 0, 0, 1] : Array(repeating: 0, count: 15) + [1]
        let remote = [UInt8](repeating: 0, count: local.count)
        var uid: UInt32 = 0
        var state: UInt8 = 0
        guard signin_tcp_socket_uid(family, local, UInt16(port), remote, 0, &uid, &state) == 0, state == Self.listening else { return nil }
        return uid
    }

    /// TCP_LISTEN.
    static let listening: UInt8 = 10

    /// The holder of a loopback port, in words: the person's own program or another user's.
    static func holderText(family: Int32, port: Int) -> String {
        switch listenerOwner(family: family, port: port) {
        case Posix.geteuid()?: return "another program of yours listens there (a sign-in or local server of yours still running, perhaps)"
        case let uid?: return "another user (uid \(uid)) listens there"
        case nil: return "another program holds it"
        }
    }

    private static func hex(_ v: UInt32, _ width: Int) -> String { String(v, radix: 16, uppercase: true).leftPadded(width) }
}
