import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Which local user opened a loopback TCP connection, so the listener answers only the person signing in.
///
/// Linux has no `SO_PEERCRED` for TCP, but every socket is listed in `/proc/net/tcp` (IPv4) and
/// `/proc/net/tcp6` with its owner's uid. The client's end of an accepted connection is the line whose local
/// address is our peer's and whose remote address is ours. The client's end keeps its uid while we hold our end
/// open (even after the client closes, its socket waits in FIN_WAIT2 until we close), so the answer is stable.
enum LoopbackPeer {
    /// The verdict for one accepted connection.
    enum Owner: Equatable {
        case uid(UInt32)
        /// Not found: the connection came through another network namespace (a container's port forward, WSL's
        /// relay), or `/proc` is not mounted. `reason` says which.
        case unknown(reason: String)
    }

    /// The owner of the client end of the accepted connection `fd`.
    static func owner(ofAccepted fd: Int32) -> Owner {
        guard let peer = address(fd, peer: true), let local = address(fd, peer: false) else {
            return .unknown(reason: "the connection's addresses could not be read")
        }
        let table = peer.isIPv6 ? "/proc/net/tcp6" : "/proc/net/tcp"
        guard let data = try? FileIO.readStream(path: table, limit: 1 << 24) else {
            return .unknown(reason: "\(table) cannot be read")
        }
        return owner(in: data, client: peer.procText, server: local.procText) ?? .unknown(reason: "the client's socket is not in \(table) (another network namespace?)")
    }

    /// Finds the socket whose local end is `client` and remote end is `server` in a `/proc/net/tcp` table. Pure, for tests.
    static func owner(in table: Data, client: String, server: String) -> Owner? {
        for line in table.split(separator: UInt8(ascii: "\n")).dropFirst() {
            let fields = line.split(separator: UInt8(ascii: " "))
            guard fields.count > 7 else { continue }
            guard ascii(fields[1]).uppercased() == client, ascii(fields[2]).uppercased() == server else { continue }
            guard let uid = UInt32(ascii(fields[7])) else { return nil }
            return .uid(uid)
        }
        return nil
    }

    private static func ascii(_ bytes: Data.SubSequence) -> String { String(decoding: bytes, as: UTF8.self) }

    struct Address {
        let isIPv6: Bool
        /// The address as `/proc/net/tcp*` prints it: each 32-bit word of the address in host byte order as
        /// eight hex digits, a colon, the port as four hex digits.
        let procText: String
    }

    static func address(_ fd: Int32, peer: Bool) -> Address? {
        var st = sockaddr_storage()
        var len = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let rc = withUnsafeMutablePointer(to: &st) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { peer ? getpeername(fd, $0, &len) : getsockname(fd, $0, &len) }
        }
        guard rc == 0 else { return nil }
        let family = Int32(st.ss_family)
        return withUnsafePointer(to: &st) { p -> Address? in
            switch family {
            case AF_INET:
                return p.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { a in
                    let word = a.pointee.sin_addr.s_addr  // network order in memory, printed as a host-order integer
                    return Address(isIPv6: false, procText: hex(UInt32(word), 8) + ":" + hex(UInt32(UInt16(bigEndian: a.pointee.sin_port)), 4))
                }
            case AF_INET6:
                return p.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { a in
                    var words = ""
                    withUnsafeBytes(of: a.pointee.sin6_addr) { raw in
                        for i in 0..<4 { words += hex(raw.loadUnaligned(fromByteOffset: i * 4, as: UInt32.self), 8) }
                    }
                    return Address(isIPv6: true, procText: words + ":" + hex(UInt32(UInt16(bigEndian: a.pointee.sin6_port)), 4))
                }
            default:
                return nil
            }
        }
    }

    private static func hex(_ v: UInt32, _ width: Int) -> String {
        let s = String(v, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, width - s.count)) + s
    }
}
