import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// What arrived at the redirect URI (or was pasted back): a code to exchange.
struct AuthorizationResponse: Sendable, CustomStringConvertible {
    let code: String
    /// Never the code.
    var description: String { "AuthorizationResponse(code: \(code.count) characters, via \(viaBrowser ? "browser" : "paste"))" }
    /// True when it came through the listener, so the browser waits for a result page.
    let viaBrowser: Bool
}

/// What the listener did that the person should hear about.
enum ReceiverNotice: Sendable, Equatable {
    case refusedCallback(reason: String)
    case refusedPaste(reason: String)
    /// A connection from another local user (or from an owner that cannot be found), closed unanswered.
    case refusedPeer(reason: String)
}

/// Receives the authorization redirect on `http://127.0.0.1:<port>/<path>` (and `[::1]` where available).
///
/// One thread, non-blocking sockets and `poll`, with limits on request size, header count, connections and
/// time per connection: a slow or hostile local client can neither block nor crash it. Who may talk to it:
/// only processes of the user signing in (`LoopbackPeer`), and only with a `Host` that names this listener
/// (so a web page cannot reach it through DNS rebinding). Anything but the callback path gets 404 and the wait
/// goes on; a callback with the wrong state is refused and the wait goes on.
final class LoopbackReceiver {
    let port: Int
    let callbackPath: String
    /// Refuse connections from other local users (see `LoopbackPeer`).
    let sameUserOnly: Bool
    var resultPath: String { callbackPath == "/" ? "/signin-result" : callbackPath + "-result" }
    var redirectURI: String { "http://127.0.0.1:\(port)\(callbackPath)" }

    static let maxConnections = 32
    static let perConnectionSeconds = 5.0

    private var listeners: [Int32] = []

    private final class Connection {
        let fd: Int32
        let deadline: Double
        var buffer: [UInt8] = []
        init(fd: Int32, deadline: Double) {
            self.fd = fd
            self.deadline = deadline
        }
    }
    private var connections: [Connection] = []
    private var reportedPeers: Set<String> = []

    /// Binds the loopback addresses. Port 0 lets the system choose; [::1] joins on the same port when it can.
    init(port: Int, path: String, sameUserOnly: Bool = true) throws(SignInError) {
        callbackPath = path
        self.sameUserOnly = sameUserOnly
        let v4 = try LoopbackReceiver.bind(family: AF_INET, port: port)
        listeners.append(v4.fd)
        self.port = v4.port
        if let v6 = try? LoopbackReceiver.bind(family: AF_INET6, port: v4.port) { listeners.append(v6.fd) }
    }

    deinit { close() }

    func close() {
        for c in connections { Glibc.close(c.fd) }
        connections.removeAll()
        for fd in listeners { Glibc.close(fd) }
        listeners.removeAll()
    }

    private static func bind(family: Int32, port: Int) throws(SignInError) -> (fd: Int32, port: Int) {
        let fd = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw .system(reason: "socket: \(FileIO.errnoText())") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var rc: Int32
        if family == AF_INET {
            var a = sockaddr_in()
            a.sin_family = sa_family_t(AF_INET)
            a.sin_port = in_port_t(UInt16(port).bigEndian)
            a.sin_addr.s_addr = in_addr_t(0x7f00_0001).bigEndian
            rc = withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        } else {
            setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &one, socklen_t(MemoryLayout<Int32>.size))
            var a = sockaddr_in6()
            a.sin6_family = sa_family_t(AF_INET6)
            a.sin6_port = in_port_t(UInt16(port).bigEndian)
            a.sin6_addr = in6addr_loopback
            rc = withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) } }
        }
        guard rc == 0, listen(fd, 16) == 0 else {
            let e = errno
            Glibc.close(fd)
            if e == EADDRINUSE { throw .system(reason: "port \(port) on the loopback address is in use; choose another with --port or redirect_port") }
            throw .system(reason: "cannot listen on loopback port \(port): \(FileIO.errnoText(e))")
        }
        var st = sockaddr_storage()
        var len = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &st) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
        let bound = withUnsafePointer(to: &st) { p -> Int in
            family == AF_INET
                ? p.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) }
                : p.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin6_port)) }
        }
        return (fd, bound)
    }

    static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    // MARK: The two phases

    /// Waits for a valid callback (or a valid pasted address on `pasteFD`), for `timeoutSeconds` or until
    /// cancellation.
    func waitForCode(validator: CallbackValidator, timeoutSeconds: Int, canceller: Canceller,
                     pasteFD: Int32?, notice: (ReceiverNotice) -> Void) throws(SignInError) -> AuthorizationResponse {
        let paste = pasteFD.map(PasteReader.init)
        let answer = try serve(until: Self.now() + Double(timeoutSeconds), canceller: canceller, paste: paste, notice: notice,
            onRequest: { (r: HTTPRequestHead) throws(SignInError) -> (Reply, AuthorizationResponse?) in
                guard r.path == self.callbackPath else { return (.status("404 Not Found"), nil) }
                switch validator.check(query: r.query) {
                case .accept(let code):
                    // Redirect so the code leaves the address bar and history; the result page is served by `finish`.
                    return (.redirect(self.resultPath), AuthorizationResponse(code: code, viaBrowser: true))
                case .refuse(let reason):
                    notice(.refusedCallback(reason: reason))
                    return (.page("400 Bad Request", .failure("This sign-in response was refused: \(reason).", next: "If you started a sign-in, it is still waiting in the terminal.")), nil)
                case .end(let error):
                    throw error
                }
            },
            onLine: { (line: String) throws(SignInError) -> AuthorizationResponse? in
                switch validator.checkPasted(line) {
                case .accept(let code): return AuthorizationResponse(code: code, viaBrowser: false)
                case .refuse(let reason): notice(.refusedPaste(reason: reason)); return nil
                case .end(let error): throw error
                }
            })
        guard let answer else { throw .timedOut(after: .seconds(timeoutSeconds)) }
        return answer
    }

    /// Serves the result page to the browser that followed the redirect, waiting at most `seconds`; then closes.
    func finish(_ page: ResultPage, seconds: Double) {
        defer { close() }
        _ = try? serve(until: LoopbackReceiver.now() + seconds, canceller: nil, paste: nil, notice: { _ in },
            onRequest: { (r: HTTPRequestHead) throws(SignInError) -> (Reply, Bool?) in
                r.path == self.resultPath ? (.page("200 OK", page), true) : (.status("404 Not Found"), nil)
            },
            onLine: { (_: String) throws(SignInError) -> Bool? in nil })
    }

    /// Ends a wait that a callback ended with an error: the browser that sent it gets a page saying why.
    private func failurePage(for error: SignInError) -> ResultPage {
        if case .canceled = error { return .failure("Sign-in was canceled.", next: "You can close this tab.") }
        return .failure(error.description)
    }

    // MARK: The loop

    enum Reply {
        case status(String)
        case page(String, ResultPage)
        case redirect(String)
    }

    /// The accept-and-poll loop both phases share. `onRequest` answers each well-formed request from our own user
    /// to our own address and may end the loop with a value; `onLine` does the same for pasted lines. Returns nil
    /// at `deadline`; throws on cancellation or when a handler ends the sign-in.
    private func serve<T>(until deadline: Double, canceller: Canceller?, paste: PasteReader?, notice: (ReceiverNotice) -> Void,
                          onRequest: (HTTPRequestHead) throws(SignInError) -> (Reply, T?),
                          onLine: (String) throws(SignInError) -> T?) throws(SignInError) -> T? {
        while !listeners.isEmpty {
            if let canceller, canceller.isCanceled { throw .canceled(reason: "interrupted") }
            let now = LoopbackReceiver.now()
            if now >= deadline { return nil }
            expireConnections(now: now)
            // Snapshot: accepting and dropping below change `connections`; the poll results follow this list.
            let polled = connections
            var fds = listeners.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            fds += polled.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
            if let canceller { fds.append(pollfd(fd: canceller.pollFD, events: Int16(POLLIN), revents: 0)) }
            if let paste, !paste.atEOF { fds.append(pollfd(fd: paste.fd, events: Int16(POLLIN), revents: 0)) }
            let nextDeadline = connections.map(\.deadline).min().map { min($0, deadline) } ?? deadline
            let ms = Int32(max(1, min(60_000, (nextDeadline - now) * 1000)))
            let n = poll(&fds, nfds_t(fds.count), ms)
            if n < 0 && errno != EINTR { throw .system(reason: "poll: \(FileIO.errnoText())") }
            if n <= 0 { continue }
            for (i, fd) in listeners.enumerated() where fds[i].revents != 0 { acceptAll(fd, notice: notice) }
            for (i, c) in polled.enumerated() {
                // Skip connections closed since the poll (their descriptor number may already be reused).
                guard fds[listeners.count + i].revents != 0, connections.contains(where: { $0 === c }) else { continue }
                guard let request = readRequest(c) else { continue }
                guard request.method == "GET" || request.method == "HEAD" else {
                    respond(c, .status("405 Method Not Allowed"))
                    continue
                }
                guard let host = request.host, allowedHosts.contains(host) else {
                    notice(.refusedCallback(reason: "a request addressed to \(request.host.map { "host \"\($0)\"" } ?? "no host"), not to this listener (a web page trying DNS rebinding?)"))
                    respond(c, .status("400 Bad Request"))
                    continue
                }
                do {
                    let (reply, value) = try onRequest(request)
                    respond(c, reply)
                    if let value { return value }
                } catch {
                    respond(c, .page("200 OK", failurePage(for: error)))
                    throw error
                }
            }
            if let paste, let last = fds.last, last.fd == paste.fd, last.revents != 0 {
                for line in paste.readLines() {
                    if let value = try onLine(line) { return value }
                }
            }
        }
        return nil
    }

    /// The `Host` values that name this listener.
    private var allowedHosts: Set<String> { ["127.0.0.1:\(port)", "[::1]:\(port)", "localhost:\(port)"] }

    private func acceptAll(_ listener: Int32, notice: (ReceiverNotice) -> Void) {
        while true {
            let fd = accept(listener, nil, nil)
            if fd < 0 { return }
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            if let refusal = refusal(ofAccepted: fd) {
                // Closed unanswered: another user learns nothing, not even that this is signin.
                Glibc.close(fd)
                if reportedPeers.insert(refusal).inserted { notice(.refusedPeer(reason: refusal)) }
                continue
            }
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            if connections.count >= LoopbackReceiver.maxConnections {
                // Full: drop the oldest, so a flood of idle connections cannot lock the browser out.
                let oldest = connections.removeFirst()
                Glibc.close(oldest.fd)
            }
            connections.append(Connection(fd: fd, deadline: LoopbackReceiver.now() + LoopbackReceiver.perConnectionSeconds))
        }
    }

    /// Why a new connection is refused, or nil when it comes from the user signing in.
    private func refusal(ofAccepted fd: Int32) -> String? {
        guard sameUserOnly else { return nil }
        switch LoopbackPeer.owner(ofAccepted: fd) {
        case .uid(let uid):
            return uid == geteuid() ? nil : "refused a connection from another user, uid \(uid)"
        case .unknown(let reason):
            return "refused a connection whose user cannot be told (\(reason)); if your browser reaches this machine through a relay, set \"listener_same_user_only\": false"
        }
    }

    private func expireConnections(now: Double) {
        connections.removeAll { c in
            if c.deadline <= now {
                Glibc.close(c.fd)
                return true
            }
            return false
        }
    }

    private func drop(_ c: Connection) {
        Glibc.close(c.fd)
        connections.removeAll { $0 === c }
    }

    /// Reads what is available; returns a request once its head is complete. Closes the connection on
    /// EOF, errors, oversize or malformed input (answering where that is still useful).
    private func readRequest(_ c: Connection) -> HTTPRequestHead? {
        var chunk = [UInt8](repeating: 0, count: 4096)
        let n = Glibc.read(c.fd, &chunk, chunk.count)
        if n < 0 && (errno == EAGAIN || errno == EINTR) { return nil }
        if n <= 0 {
            drop(c)
            return nil
        }
        c.buffer += chunk[0..<n]
        switch HTTPRequestHead.parse(c.buffer) {
        case .incomplete: return nil
        case .tooLarge: respond(c, .status("431 Request Header Fields Too Large"))
        case .malformed: respond(c, .status("400 Bad Request"))
        case .request(let r): return r
        }
        return nil
    }

    private func respond(_ c: Connection, _ reply: Reply) {
        let status: String, page: ResultPage, location: String?
        switch reply {
        case .status(let s): (status, page, location) = (s, .failure(s, next: "This address is used by signin for sign-in only."), nil)
        case .page(let s, let p): (status, page, location) = (s, p, nil)
        case .redirect(let to): (status, page, location) = ("303 See Other", .failure("Continue to the result.", next: ""), to)
        }
        let body = page.html
        var head = "HTTP/1.1 \(status)\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: \(body.utf8.count)\r\n"
        head += "Cache-Control: no-store\r\nReferrer-Policy: no-referrer\r\nX-Content-Type-Options: nosniff\r\nX-Frame-Options: DENY\r\n"
        head += "Content-Security-Policy: default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'\r\nConnection: close\r\n"
        if let location { head += "Location: \(location)\r\n" }
        let bytes = Array((head + "\r\n" + body).utf8)
        _ = bytes.withUnsafeBytes { send(c.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        drop(c)
    }
}
