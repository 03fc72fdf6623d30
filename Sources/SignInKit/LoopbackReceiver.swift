import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// What arrived at the redirect URI (or was pasted back): a code to exchange.
struct AuthorizationResponse: Sendable {
    let code: String
    /// True when it came through the listener, so the browser waits for a result page.
    let viaBrowser: Bool
}

/// What the listener did that the person should hear about.
enum ReceiverNotice: Sendable {
    case refusedCallback(reason: String)
    case refusedPaste(reason: String)
}

/// Receives the authorization redirect on `http://127.0.0.1:<port>/<path>` (and `[::1]` where available).
///
/// One thread, non-blocking sockets and `poll`, with limits on request size, header count, connections and
/// time per connection: a slow or hostile local client can neither block nor crash it. Anything but the
/// callback path gets 404 and the wait goes on; a callback with the wrong state is refused and the wait goes on.
final class LoopbackReceiver {
    let port: Int
    let callbackPath: String
    var resultPath: String { callbackPath == "/" ? "/signin-result" : callbackPath + "-result" }
    var redirectURI: String { "http://127.0.0.1:\(port)\(callbackPath)" }

    static let maxRequestBytes = 8 * 1024
    static let maxHeaders = 64
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

    /// Binds the loopback addresses. Port 0 lets the system choose; [::1] joins on the same port when it can.
    init(port: Int, path: String) throws(SignInError) {
        callbackPath = path
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

    // MARK: Waiting for the callback

    /// Waits for a valid callback (or a valid pasted address on `pasteFD`), until `deadline` (monotonic seconds)
    /// or cancellation.
    func waitForCode(state: String, issuer: String, acceptGoogleIssuerForm: Bool, deadline: Double, timeoutSeconds: Int,
                     canceller: Canceller, pasteFD: Int32?, notice: (ReceiverNotice) -> Void) throws(SignInError) -> AuthorizationResponse {
        var pasteFD = pasteFD
        var pasteBuffer: [UInt8] = []
        let validator = CallbackValidator(state: state, issuer: issuer, acceptGoogleIssuerForm: acceptGoogleIssuerForm)
        while true {
            if canceller.isCanceled { throw .canceled(reason: "interrupted") }
            let now = LoopbackReceiver.now()
            if now >= deadline { throw .timedOut(seconds: timeoutSeconds) }
            expireConnections(now: now)
            // Snapshot: accepting and dropping below change `connections`, the poll results follow this list.
            let polled = connections
            var fds = listeners.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            fds += polled.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
            fds.append(pollfd(fd: canceller.pollFD, events: Int16(POLLIN), revents: 0))
            if let p = pasteFD { fds.append(pollfd(fd: p, events: Int16(POLLIN), revents: 0)) }
            let nextDeadline = connections.map(\.deadline).min().map { min($0, deadline) } ?? deadline
            let ms = Int32(max(1, min(60_000, (nextDeadline - now) * 1000)))
            let n = poll(&fds, nfds_t(fds.count), ms)
            if n < 0 && errno != EINTR { throw .system(reason: "poll: \(FileIO.errnoText())") }
            if n <= 0 { continue }
            var index = 0
            for fd in listeners {
                if fds[index].revents != 0 { acceptAll(fd) }
                index += 1
            }
            for c in polled {
                defer { index += 1 }
                // Skip connections closed since the poll (their descriptor number may already be reused).
                guard fds[index].revents != 0, connections.contains(where: { $0 === c }) else { continue }
                guard let request = readRequest(c) else { continue }
                if let response = try handle(request, on: c, validator: validator, notice: notice) { return response }
            }
            index += 1  // canceller
            if let p = pasteFD, fds[index].revents != 0 {
                var chunk = [UInt8](repeating: 0, count: 4096)
                let got = Glibc.read(p, &chunk, chunk.count)
                if got <= 0 {
                    if got == 0 || (errno != EAGAIN && errno != EINTR) { pasteFD = nil }  // EOF: the listener still counts
                    continue
                }
                pasteBuffer += chunk[0..<got]
                if pasteBuffer.count > 16 * 1024 { pasteBuffer.removeAll() }
                while let nl = pasteBuffer.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: pasteBuffer[..<nl], as: UTF8.self).trimmingWhitespace
                    pasteBuffer.removeSubrange(...nl)
                    if line.isEmpty { continue }
                    switch validator.checkPasted(line) {
                    case .accept(let code): return AuthorizationResponse(code: code, viaBrowser: false)
                    case .refuse(let reason): notice(.refusedPaste(reason: reason))
                    case .end(let error): throw error
                    }
                }
            }
        }
    }

    private func acceptAll(_ listener: Int32) {
        while true {
            let fd = accept(listener, nil, nil)
            if fd < 0 { return }
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            if connections.count >= LoopbackReceiver.maxConnections {
                // Full: drop the oldest, so a flood of idle connections cannot lock the browser out.
                let oldest = connections.removeFirst()
                Glibc.close(oldest.fd)
            }
            connections.append(Connection(fd: fd, deadline: LoopbackReceiver.now() + LoopbackReceiver.perConnectionSeconds))
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

    struct Request {
        let method: String
        let path: String
        let query: Substring
    }

    /// Reads what is available; returns a request once its head is complete. Closes the connection on
    /// EOF, errors, oversize or malformed input (answering 400 where that is still useful).
    private func readRequest(_ c: Connection) -> Request? {
        var chunk = [UInt8](repeating: 0, count: 4096)
        let n = Glibc.read(c.fd, &chunk, chunk.count)
        if n < 0 && (errno == EAGAIN || errno == EINTR) { return nil }
        if n <= 0 {
            drop(c)
            return nil
        }
        c.buffer += chunk[0..<n]
        switch LoopbackReceiver.parseHead(c.buffer) {
        case .incomplete: return nil
        case .tooLarge: respond(c, status: "431 Request Header Fields Too Large", page: nil)
        case .malformed: respond(c, status: "400 Bad Request", page: nil)
        case .request(let r): return r
        }
        return nil
    }

    enum HeadParse {
        case incomplete, tooLarge, malformed
        case request(Request)
    }

    /// Parses an HTTP/1.x request head from the bytes received so far. Pure, so it can be fuzzed.
    static func parseHead(_ buffer: [UInt8]) -> HeadParse {
        guard let end = headEnd(buffer) else { return buffer.count > maxRequestBytes ? .tooLarge : .incomplete }
        guard end <= maxRequestBytes else { return .tooLarge }
        let head = buffer[..<end]
        guard !head.contains(0), let text = String(validating: head, as: UTF8.self) else { return .malformed }
        let lines = text.split(separator: "\r\n", omittingEmptySubsequences: false)
        guard lines.count - 1 <= maxHeaders else { return .tooLarge }
        let parts = lines[0].split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[2].hasPrefix("HTTP/1."), parts[1].hasPrefix("/") else { return .malformed }
        let target = parts[1]
        let q = target.firstIndex(of: "?")
        return .request(Request(method: String(parts[0]), path: String(target[..<(q ?? target.endIndex)]),
                                query: q.map { target[target.index(after: $0)...] } ?? ""))
    }

    static func headEnd(_ b: [UInt8]) -> Int? {
        guard b.count >= 4 else { return nil }
        for i in 0...(b.count - 4) where b[i] == 13 && b[i + 1] == 10 && b[i + 2] == 13 && b[i + 3] == 10 { return i }
        return nil
    }

    private func handle(_ r: Request, on c: Connection, validator: CallbackValidator, notice: (ReceiverNotice) -> Void) throws(SignInError) -> AuthorizationResponse? {
        guard r.method == "GET" || r.method == "HEAD" else {
            respond(c, status: "405 Method Not Allowed", page: nil)
            return nil
        }
        guard r.path == callbackPath else {
            respond(c, status: "404 Not Found", page: nil)
            return nil
        }
        switch validator.check(query: r.query) {
        case .accept(let code):
            // Redirect so the code leaves the address bar and history; the result page is served by `finish`.
            respond(c, status: "303 See Other", page: nil, location: resultPath)
            return AuthorizationResponse(code: code, viaBrowser: true)
        case .refuse(let reason):
            notice(.refusedCallback(reason: reason))
            respond(c, status: "400 Bad Request", page: ResultPage.html(success: false, message: "This sign-in response was refused: \(reason). If you started a sign-in, it is still waiting."))
            return nil
        case .end(let error):
            let canceled: Bool
            if case .canceled = error { canceled = true } else { canceled = false }
            respond(c, status: "200 OK", page: ResultPage.html(success: false, message: canceled ? "Sign-in was canceled. You may close this tab." : error.description))
            throw error
        }
    }

    private func respond(_ c: Connection, status: String, page: String?, location: String? = nil) {
        let body = page ?? ResultPage.html(success: false, message: status)
        var head = "HTTP/1.1 \(status)\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: \(body.utf8.count)\r\n"
        head += "Cache-Control: no-store\r\nReferrer-Policy: no-referrer\r\nX-Content-Type-Options: nosniff\r\n"
        head += "Content-Security-Policy: default-src 'none'; style-src 'unsafe-inline'\r\nConnection: close\r\n"
        if let location { head += "Location: \(location)\r\n" }
        let bytes = Array((head + "\r\n" + body).utf8)
        _ = bytes.withUnsafeBytes { send(c.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        drop(c)
    }

    // MARK: After the exchange

    /// Serves the result page to the browser that followed the redirect, waiting at most `seconds`.
    func finish(success: Bool, message: String, seconds: Double) {
        let deadline = LoopbackReceiver.now() + seconds
        let page = ResultPage.html(success: success, message: message)
        while !listeners.isEmpty && LoopbackReceiver.now() < deadline {
            let polled = connections
            var fds = listeners.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) } + polled.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
            let ms = Int32(max(1, (deadline - LoopbackReceiver.now()) * 1000))
            guard poll(&fds, nfds_t(fds.count), ms) > 0 else {
                expireConnections(now: LoopbackReceiver.now())
                continue
            }
            for (i, fd) in listeners.enumerated() where fds[i].revents != 0 { acceptAll(fd) }
            for (i, c) in polled.enumerated() where fds[i + listeners.count].revents != 0 && connections.contains(where: { $0 === c }) {
                guard let r = readRequest(c) else { continue }
                if r.path == resultPath {
                    respond(c, status: "200 OK", page: page)
                    close()
                    return
                }
                respond(c, status: "404 Not Found", page: nil)
            }
        }
        close()
    }
}

/// The checks every authorization response gets, whether it reaches the listener or is pasted.
struct CallbackValidator {
    let state: String
    let issuer: String
    let acceptGoogleIssuerForm: Bool

    enum Verdict {
        case accept(code: String)
        /// Not for this sign-in: tell the person, keep waiting.
        case refuse(String)
        /// For this sign-in, and it ends it.
        case end(SignInError)
    }

    func check(query: Substring) -> Verdict {
        guard let p = FormEncoding.decode(query) else { return .refuse("malformed query (bad percent-encoding or repeated parameter)") }
        guard let got = p["state"] else {
            // The provider may report a denial without echoing state (oidc-provider-mock does). Such a response can
            // only end this attempt, never sign anyone in.
            if p["error"] == "access_denied" { return .end(.canceled(reason: "access was denied in the browser")) }
            return .refuse("no state parameter")
        }
        guard Crypto.constantTimeEqual(got, state) else { return .refuse("state does not match this sign-in (possible cross-site request forgery)") }
        if let iss = p["iss"], iss != issuer, !(acceptGoogleIssuerForm && iss == "accounts.google.com") {
            return .end(.callbackRejected(reason: "the response names issuer \"\(iss)\", not \"\(issuer)\" (possible mix-up attack)"))
        }
        if let error = p["error"] {
            if error == "access_denied" { return .end(.canceled(reason: "access was denied in the browser")) }
            return .end(.providerError(endpoint: "authorization endpoint", code: error, detail: p["error_description"]))
        }
        guard let code = p["code"], !code.isEmpty else { return .end(.providerError(endpoint: "authorization endpoint", code: "no_code", detail: "the response carried neither code nor error")) }
        return .accept(code: code)
    }

    /// Checks an address pasted from the browser's address bar.
    func checkPasted(_ line: String) -> Verdict {
        guard let q = line.firstIndex(of: "?") else { return .refuse("that is not the address the browser ended at (no query part)") }
        var query = line[line.index(after: q)...]
        if let hash = query.firstIndex(of: "#") { query = query[..<hash] }
        return check(query: query)
    }
}

/// The small page the browser shows when the sign-in ends.
enum ResultPage {
    static func html(success: Bool, message: String) -> String {
        let title = success ? "Signed in" : "Sign-in not completed"
        let escaped = message.replacing("&", with: "&amp;").replacing("<", with: "&lt;").replacing(">", with: "&gt;").replacing("\"", with: "&quot;")
        return """
            <!doctype html><html><head><meta charset="utf-8"><title>signin: \(title)</title>
            <style>body{font-family:system-ui,sans-serif;max-width:34em;margin:4em auto;padding:0 1em;color:#222}h1{font-size:1.4em}</style>
            </head><body><h1>\(title)</h1><p id="message">\(escaped)</p></body></html>
            """
    }
}

extension String {
    var trimmingWhitespace: String {
        let s = self.drop { $0.isWhitespace }
        return String(s.reversed().drop { $0.isWhitespace }.reversed())
    }
}
