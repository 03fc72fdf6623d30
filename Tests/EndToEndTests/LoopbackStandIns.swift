import Foundation
import Synchronization
import SignInKit
import SignInTransport
import Testing

/// A TCP server on loopback that accepts nothing and answers nothing: a provider that never answers. Not
/// listening (`listening: false`), its port is held but refuses every connection: a provider that is down.
final class SilentServer: @unchecked Sendable {
    let fd: Int32
    let port: Int
    var url: String { "http://127.0.0.1:\(port)" }

    /// Bound to 127.0.0.1 (listening unless told not to), or with `ipv6Only` to [::1] alone (someone else's listener
    /// where a browser sent to `localhost` may go first), at a port the system chose.
    init(listening: Bool = true, ipv6Only: Bool = false) throws {
        let fd = socket(ipv6Only ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.fd = fd
        var len = socklen_t(ipv6Only ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size)
        var storage = sockaddr_storage()
        if ipv6Only {
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &one, socklen_t(MemoryLayout<Int32>.size))
            withUnsafeMutablePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                $0.pointee.sin6_family = sa_family_t(AF_INET6)
                $0.pointee.sin6_addr = in6addr_loopback
            } }
        } else {
            withUnsafeMutablePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                $0.pointee.sin_family = sa_family_t(AF_INET)
                $0.pointee.sin_addr.s_addr = in_addr_t(0x7f00_0001).bigEndian
            } }
        }
        let ok = withUnsafeMutablePointer(to: &storage) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) == 0 && (!listening || listen(fd, 8) == 0) && getsockname(fd, $0, &len) == 0 }
        }
        guard ok else { throw HarnessError(description: "silent server: \(errno)") }
        // The port is at the same offset in both address structures.
        port = Int(UInt16(bigEndian: withUnsafePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_port } }))
    }

    /// A connection waits in the backlog (the listening socket is readable).
    var hasPendingConnection: Bool {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&p, 1, 0) == 1
    }

    deinit { close(fd) }
}

/// A loopback port free a moment ago, for a provider that must be told the redirect address before signin listens
/// there (glewlwyd and idpyoidc register the exact `redirect_uri`): signin's own listener binds port 0 (on 127.0.0.1
/// and [::1], as a sign-in's does) and is closed at once for `redirect_port` to take.
func freeLoopbackPort() throws -> Int {
    let listener = try LoopbackServer(port: 0)
    defer { listener.close() }
    return listener.port
}
