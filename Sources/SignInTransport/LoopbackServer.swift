import SignInBase
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// One answer of a `LoopbackServer` handler: the status line's text, header fields and a body.
package struct LoopbackResponse {
    package var status: String
    package var headers: [(String, String)] = []
    package var body: [UInt8] = []
    /// Set: no answer yet; the connection waits (unread, outside the per-connection time) until the handler's owner
    /// answers it with `LoopbackServer.complete(_:_:)`, so a question put to a person blocks no one else.
    var deferral: String?

    /// No answer now: `complete(id, ...)` gives it later (or the connection closes unanswered after `seconds`).
    package static func later(_ id: String) -> LoopbackResponse {
        var r = LoopbackResponse(status: "")
        r.deferral = id
        return r
    }

    package init(status: String, headers: [(String, String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A text answer (`contentType` as given).
    package static func text(_ status: String, _ text: String, contentType: String = "text/plain; charset=utf-8", headers: [(String, String)] = []) -> LoopbackResponse {
        LoopbackResponse(status: status, headers: [("Content-Type", contentType)] + headers, body: Array(text.utf8))
    }
}

/// What the server did that the person should hear about (the handler's own notices come from the handler).
package enum LoopbackServerNotice: Sendable, Equatable {
    /// A request addressed to another host than this server (a web page trying DNS rebinding?), refused.
    case refusedHost(reason: String)
    /// A connection from another local user (or from an owner that cannot be found), closed unanswered.
    case refusedPeer(reason: String)
}

/// A local HTTP/1.1 server on `127.0.0.1` (and `[::1]` on the same port where available), the part every local
/// server of signin shares: the OAuth redirect (`LoopbackReceiver`), and next the metadata server.
///
/// One thread, non-blocking sockets and `poll`, with limits on request size, header count, connections and
/// time per connection: a slow or hostile local client can neither block nor crash it. Who may talk to it: only
/// processes of the user running signin (`LoopbackPeer`, unless `sameUserOnly` is off), with a `Host` that names
/// this server (so a web page cannot reach it through DNS rebinding), with one of `methods`. Each well-formed
/// request that passes goes to the handler, whose answer is sent and the connection closed.
package final class LoopbackServer {
    package let port: Int
    /// Refuse connections from other local users (see `LoopbackPeer`).
    package let sameUserOnly: Bool
    /// The methods a handler is asked about; others get 405.
    package let methods: Set<String>
    /// How the server's own refusals (405, 400, 431) are worded: plain text, or a handler's page.
    package let errorResponse: (String) -> LoopbackResponse
    /// Only `Host: 127.0.0.1:PORT` (and only IPv4) rather than any loopback name: what tools configured with an
    /// address send, and nothing a browser sends for another site.
    package let addressHostOnly: Bool

    static let maxConnections = 32
    static let perConnectionSeconds = 5.0

    /// A listening socket and the name the handler knows it by (`HTTPRequestHead.listener`).
    private struct Listener {
        package let fd: Int32
        package let tag: String
        /// A Unix socket's path, removed when the listener closes.
        package let path: String?
    }
    private var listeners: [Listener] = []

    private final class Connection {
        package let fd: Int32
        package var deadline: Double
        package let listener: String
        package let peer: PeerCredentials?
        package var buffer: [UInt8] = []
        /// Waiting for `complete` under this id: not read any more.
        var deferral: String?
        init(fd: Int32, deadline: Double, listener: String, peer: PeerCredentials?) {
            self.fd = fd
            self.deadline = deadline
            self.listener = listener
            self.peer = peer
        }
    }
    private var connections: [Connection] = []
    private var reportedPeers: Set<String> = []
    /// Descriptors polled beside the sockets (a pidfd): one becoming readable wakes the loop, which runs `onTick`.
    package var wakeFDs: [Int32] = []
    /// How long a deferred request may wait for its answer.
    static let deferredSeconds = 300.0

    /// Binds the loopback addresses. Port 0 lets the system choose; [::1] joins on the same port when it can.
    ///
    /// With `ownBothFamilies` (a redirect to `localhost`, which a browser may resolve to `[::1]` first) the port is
    /// one this server holds on both 127.0.0.1 and [::1]: whoever held `[::1]:PORT` would be sent the code. A port
    /// the system chose is chosen again (a few times) when [::1] is taken there; a port asked for is refused with
    /// `.listenerUnavailable`. A machine with no IPv6 loopback at all has no [::1] for anyone to hold.
    package init(port: Int, sameUserOnly: Bool = true, methods: Set<String> = ["GET", "HEAD"], addressHostOnly: Bool = false,
         ownBothFamilies: Bool = false,
         errorResponse: @escaping (String) -> LoopbackResponse = { .text($0, $0 + "\n") }) throws(SignInError) {
        self.sameUserOnly = sameUserOnly
        self.methods = methods
        self.addressHostOnly = addressHostOnly
        self.errorResponse = errorResponse
        var attempts = 0
        while true {
            attempts += 1
            let v4 = try LoopbackServer.bind(family: AF_INET, port: port)
            if addressHostOnly {
                listeners.append(Listener(fd: v4.fd, tag: "", path: nil))
                self.port = v4.port
                return
            }
            switch LoopbackServer.bindResult(family: AF_INET6, port: v4.port) {
            case .success(let v6):
                listeners += [Listener(fd: v4.fd, tag: "", path: nil), Listener(fd: v6.fd, tag: "", path: nil)]
                self.port = v4.port
                return
            case .failure(let e) where e.code == EADDRINUSE && ownBothFamilies:
                Posix.close(v4.fd)
                guard port == 0, attempts < 8 else {
                    throw .listenerUnavailable(address: "[::1]:\(v4.port)", reason: "\(LoopbackPeer.holderText(family: AF_INET6, port: v4.port)), and a browser sent to localhost:\(v4.port) may go there first and hand it the sign-in's code; choose another redirect_port, or redirect_host \"127.0.0.1\"")
                }
            case .failure:
                // [::1] missing (no IPv6 loopback) or taken while the redirect names 127.0.0.1 only: IPv4 serves.
                listeners.append(Listener(fd: v4.fd, tag: "", path: nil))
                self.port = v4.port
                return
            }
        }
    }

    /// A server on a Unix socket at `path` (mode 0600, in a folder the caller made 0700), for local clients that
    /// are not browsers (the agent): who connects is the kernel's `SO_PEERCRED`, and `Host` is not asked.
    package init(unixSocket path: String, tag: String, methods: Set<String> = ["GET", "POST"]) throws(SignInError) {
        self.sameUserOnly = true
        self.methods = methods
        self.addressHostOnly = false
        self.errorResponse = { .text($0, $0 + "\n") }
        self.port = 0
        try addUnixListener(path: path, tag: tag)
    }

    /// Listens on one more Unix socket, whose requests carry `tag` (a forwarded session's own socket).
    package func addUnixListener(path: String, tag: String) throws(SignInError) {
        let fd = try LoopbackServer.bindUnix(path)
        listeners.append(Listener(fd: fd, tag: tag, path: path))
    }

    /// Stops listening on the socket of `tag` (its file is removed) and closes its open connections.
    package func removeListener(tag: String) {
        listeners.removeAll { l in
            guard l.tag == tag else { return false }
            Posix.close(l.fd)
            if let path = l.path { Posix.unlink(path) }
            return true
        }
        connections.removeAll { c in
            guard c.listener == tag else { return false }
            Posix.close(c.fd)
            return true
        }
    }

    private static func bindUnix(_ path: String) throws(SignInError) -> Int32 {
        guard path.utf8.count <= UnixSocketAddress.maxPathBytes else {
            throw .system(reason: "the socket path \(path) is longer than \(UnixSocketAddress.maxPathBytes) bytes; set XDG_RUNTIME_DIR to a shorter folder")
        }
        let fd: Int32
        switch Posix.openSocket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0) {
        case .success(let s): fd = s
        case .failure(let e): throw .system(reason: "socket: \(e)")
        }
        // A socket left by an agent that died is replaced; anything else at that path is not touched.
        if case .success(let st) = Posix.status(ofLink: path) {
            guard st.kind == .socket, st.isOurs else {
                Posix.close(fd)
                throw .system(reason: "\(path) exists and is not a socket of yours; remove it")
            }
            Posix.unlink(path)
        }
        // Created 0600 from the start (umask), not chmod-ed after: no window in which another user could connect.
        let old = Posix.umask(0o177)
        let bound = UnixSocketAddress.with(path) { Posix.failure(of: Posix.bind(fd, $0, $1)) } ?? SystemError(code: ENAMETOOLONG)
        Posix.umask(old)
        if let e = bound ?? Posix.failure(of: Posix.listen(fd, 64)) {
            Posix.close(fd)
            throw .system(reason: "cannot listen on \(path): \(e)")
        }
        return fd
    }

    deinit { self.close() }

    var isOpen: Bool { !listeners.isEmpty }

    package func close() {
        for c in connections { Posix.close(c.fd) }
        connections.removeAll()
        for l in listeners {
            Posix.close(l.fd)
            if let path = l.path { Posix.unlink(path) }
        }
        listeners.removeAll()
    }

    /// The `Host` values that name this server.
    var allowedHosts: Set<String> { addressHostOnly ? ["127.0.0.1:\(port)"] : ["127.0.0.1:\(port)", "[::1]:\(port)", "localhost:\(port)"] }

    /// A port of 127.0.0.1 the system has free now (bound, then let go): for a redirect URI that must be registered
    /// before its listener is up (RFC 7591).
    package static func freeLoopbackPort() throws(SignInError) -> Int {
        let (fd, port) = try bind(family: AF_INET, port: 0)
        Posix.close(fd)
        return port
    }

    private static func bind(family: Int32, port: Int) throws(SignInError) -> (fd: Int32, port: Int) {
        switch bindResult(family: family, port: port) {
        case .success(let bound): return bound
        case .failure(let e) where e.code == EADDRINUSE:
            throw .listenerUnavailable(address: "\(family == AF_INET ? "127.0.0.1" : "[::1]"):\(port)",
                                       reason: "\(LoopbackPeer.holderText(family: family, port: port)); choose another port (--port, or redirect_port for a sign-in)")
        case .failure(let e): throw .system(reason: "cannot listen on loopback port \(port): \(e)")
        }
    }

    /// An errno, as a `Result`'s failure.
    private static func bindResult(family: Int32, port: Int) -> Result<(fd: Int32, port: Int), SystemError> {
        let fd: Int32
        switch Posix.openSocket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0) {
        case .success(let s): fd = s
        case .failure(let e): return .failure(e)
        }
        var one: Int32 = 1
        Posix.setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var bindFailure: SystemError?
        if family == AF_INET {
            var a = sockaddr_in()
            a.sin_family = sa_family_t(AF_INET)
            a.sin_port = in_port_t(UInt16(port).bigEndian)
            a.sin_addr.s_addr = in_addr_t(0x7f00_0001).bigEndian
            bindFailure = withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Posix.failure(of: Posix.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))) } }
        } else {
            Posix.setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &one, socklen_t(MemoryLayout<Int32>.size))
            var a = sockaddr_in6()
            a.sin6_family = sa_family_t(AF_INET6)
            a.sin6_port = in_port_t(UInt16(port).bigEndian)
            a.sin6_addr = Posix.ipv6Loopback
            bindFailure = withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Posix.failure(of: Posix.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))) } }
        }
        if let e = bindFailure ?? Posix.failure(of: Posix.listen(fd, 16)) {
            Posix.close(fd)
            return .failure(e)
        }
        var st = sockaddr_storage()
        var len = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &st) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Posix.getsockname(fd, $0, &len) } }
        let bound = withUnsafePointer(to: &st) { p -> Int in
            family == AF_INET
                ? p.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) }
                : p.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin6_port)) }
        }
        return .success((fd, bound))
    }

    // MARK: The loop

    /// Accepts and answers until `deadline` (nil returned), cancellation (`.canceled` thrown), or a handler's value.
    /// `handler` answers each request that passed the rules and may end the loop with a value; when it throws,
    /// `failure` gives the answer for that request first. `lines` (a pasted answer, for the OAuth redirect) is
    /// polled with the sockets, each complete line going to `onLine`, which may end the loop too.
    /// `tick`: `onTick` runs at each wake, at most this many seconds apart. Pass a `LocalService`'s own `canceller` for
    /// a server that `LocalService.stop()` ends.
    package func serve<T>(until deadline: Double = .greatestFiniteMagnitude, canceller: Canceller?, lines: PasteReader? = nil, tick: Double = 60, notice: (LoopbackServerNotice) -> Void,
                  handler: (HTTPRequestHead) throws(SignInError) -> (LoopbackResponse, T?),
                  failure: (SignInError) -> LoopbackResponse,
                  onTick: () -> Void = {},
                  onLine: (String) throws(SignInError) -> T? = { _ in nil }) throws(SignInError) -> T? {
        while !listeners.isEmpty {
            onTick()
            if let canceller, canceller.isCanceled { throw .canceled(reason: "the sign-in was canceled while waiting for the browser") }
            let now = MonotonicClock.now()
            if now >= deadline { return nil }
            expireConnections(now: now)
            // Snapshot: accepting and dropping below change `connections`; the poll results follow this list.
            let polled = connections.filter { $0.deferral == nil }
            let polledListeners = listeners
            var fds = polledListeners.map(\.fd) + polled.map(\.fd) + wakeFDs
            if let canceller { fds.append(canceller.pollFD) }
            if let lines, !lines.atEOF { fds.append(lines.fd) }
            let nextDeadline = connections.map(\.deadline).min().map { min($0, deadline) } ?? deadline
            let ms = Int32(max(1, min(tick * 1000, (nextDeadline - now) * 1000)))
            let ready: [Bool]
            switch Posix.readable(fds, milliseconds: ms) {
            case .success(let r): ready = r
            case .failure(let e) where e.code == EINTR: continue
            case .failure(let e): throw .system(reason: "poll: \(e)")
            }
            guard ready.contains(true) else { continue }
            for (i, l) in polledListeners.enumerated() where ready[i] { acceptAll(l, notice: notice) }
            for (i, c) in polled.enumerated() {
                // Skip connections closed since the poll (their descriptor number may already be reused).
                guard ready[polledListeners.count + i], connections.contains(where: { $0 === c }) else { continue }
                guard var request = readRequest(c) else { continue }
                request.listener = c.listener
                request.peer = c.peer
                guard methods.contains(request.method) else {
                    respond(c, errorResponse("405 Method Not Allowed"))
                    continue
                }
                // A Unix socket is no browser's to reach: its rule is the kernel's peer check alone.
                guard !c.listener.isEmpty || request.host.map({ allowedHosts.contains($0) }) == true else {
                    notice(.refusedHost(reason: "a request addressed to \(request.host.map { "host \"\($0)\"" } ?? "no host"), not to this listener (a web page trying DNS rebinding?)"))
                    respond(c, errorResponse("400 Bad Request"))
                    continue
                }
                do {
                    let (reply, value) = try handler(request)
                    if let id = reply.deferral {
                        c.deferral = id
                        c.deadline = MonotonicClock.now() + LoopbackServer.deferredSeconds
                    } else {
                        respond(c, reply)
                    }
                    if let value { return value }
                } catch {
                    respond(c, failure(error))
                    throw error
                }
            }
            if let lines, let last = fds.last, last == lines.fd, ready.last == true {
                for line in lines.readLines() {
                    if let value = try onLine(line) { return value }
                }
            }
        }
        return nil
    }

    private func acceptAll(_ listener: Listener, notice: (LoopbackServerNotice) -> Void) {
        while true {
            let fd = Posix.accept(listener.fd, nil, nil)
            if fd < 0 { return }
            _ = Posix.fcntl(fd, F_SETFD, FD_CLOEXEC)
            let peer = listener.path != nil ? PeerCredentials.of(fd) : nil
            if let refusal = listener.path != nil ? Self.refusal(unixPeer: peer) : refusal(ofAccepted: fd) {
                // Closed unanswered: another user learns nothing, not even that this is signin.
                Posix.close(fd)
                if reportedPeers.insert(refusal).inserted { notice(.refusedPeer(reason: refusal)) }
                continue
            }
            _ = Posix.fcntl(fd, F_SETFL, Posix.fcntl(fd, F_GETFL) | O_NONBLOCK)
            if connections.count >= LoopbackServer.maxConnections {
                // Full: drop the oldest, so a flood of idle connections cannot lock the browser out.
                let oldest = connections.removeFirst()
                Posix.close(oldest.fd)
            }
            connections.append(Connection(fd: fd, deadline: MonotonicClock.now() + LoopbackServer.perConnectionSeconds, listener: listener.tag, peer: peer))
        }
    }

    /// A Unix socket's peer must be this user (the kernel says, `SO_PEERCRED`).
    private static func refusal(unixPeer: PeerCredentials?) -> String? {
        guard let unixPeer else { return "refused a connection whose user cannot be told (SO_PEERCRED failed)" }
        return unixPeer.uid == Posix.geteuid() ? nil : "refused a connection from another user, uid \(unixPeer.uid)"
    }

    /// Why a new connection is refused, or nil when it comes from the user running signin.
    private func refusal(ofAccepted fd: Int32) -> String? {
        guard sameUserOnly else { return nil }
        switch LoopbackPeer.owner(ofAccepted: fd) {
        case .uid(let uid):
            return uid == Posix.geteuid() ? nil : "refused a connection from another user, uid \(uid)"
        case .unknown(let reason):
            return "refused a connection whose user cannot be told (\(reason)); if your browser reaches this machine through a relay, set \"listener_same_user_only\": false"
        }
    }

    /// Answers the requests deferred under `id` (`LoopbackResponse.later`); those whose client left are gone already.
    package func complete(_ id: String, _ reply: LoopbackResponse) {
        for c in connections where c.deferral == id { respond(c, reply) }
    }

    private func expireConnections(now: Double) {
        connections.removeAll { c in
            if c.deadline <= now {
                Posix.close(c.fd)
                return true
            }
            return false
        }
    }

    private func drop(_ c: Connection) {
        Posix.close(c.fd)
        connections.removeAll { $0 === c }
    }

    /// Reads what is available; returns a request once its head is complete. Closes the connection on
    /// EOF, errors, oversize or malformed input (answering where that is still useful).
    private func readRequest(_ c: Connection) -> HTTPRequestHead? {
        var chunk = [UInt8](repeating: 0, count: 4096)
        let n: Int
        switch chunk.withUnsafeMutableBytes({ Posix.reading(c.fd, $0.baseAddress, $0.count) }) {
        case .success(let got): n = got
        case .failure(let e) where e.code == EAGAIN || e.code == EINTR: return nil
        case .failure: n = -1
        }
        if n <= 0 {
            drop(c)
            return nil
        }
        c.buffer += chunk[0..<n]
        switch HTTPRequestHead.parse(c.buffer) {
        case .incomplete: return nil
        case .tooLarge: respond(c, errorResponse("431 Request Header Fields Too Large"))
        case .malformed: respond(c, errorResponse("400 Bad Request"))
        case .request(let r): return r
        }
        return nil
    }

    private func respond(_ c: Connection, _ reply: LoopbackResponse) {
        var head = "HTTP/1.1 \(reply.status)\r\n"
        for (name, value) in reply.headers { head += "\(name): \(value)\r\n" }
        head += "Content-Length: \(reply.body.count)\r\nConnection: close\r\n\r\n"
        let bytes = Array(head.utf8) + reply.body
        _ = bytes.withUnsafeBytes { Posix.send(c.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        drop(c)
    }
}
