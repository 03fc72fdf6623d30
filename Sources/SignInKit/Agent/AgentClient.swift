import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// A client of signin's agent (`AgentProtocol`): what `signin token` and the bridges use on a machine reached over
/// SSH, where `SIGNIN_AGENT_SOCK` names the forwarded socket and there is no configuration and no store.
@_spi(CLI) public struct AgentClient: Sendable {
    public let socketPath: String
    /// How long to wait for an answer (a confirmation on the laptop may take a person's time).
    public var timeoutSeconds = 120.0

    public init(socketPath: String) { self.socketPath = socketPath }

    /// An answer: the HTTP status and the JSON object (empty for 204).
    public struct Answer: Sendable {
        public let status: Int
        public let object: [String: JSONValue]
    }

    /// The agent's `hello`: its session's restrictions and the hosts its configuration allows.
    public func hello() throws(SignInError) -> Answer { try request("GET", "/v1/hello") }

    /// A token of `kind` for `account` (nil: the session's first), valid for `minTTL` seconds more.
    public func token(_ kind: TokenKind, account: String?, minTTL: Int) throws(SignInError) -> (SignInToken, account: String) {
        var query = [("kind", kind == .id ? "id" : "access"), ("min_ttl", String(minTTL))]
        if let account { query.append(("account", account)) }
        let a = try request("GET", "/v1/token?" + FormEncoding.encode(query))
        guard a.status == 200, let value = a.object["token"]?.string else { throw failure(a) }
        let expiry = a.object["expires_at"]?.number.map { Date(timeIntervalSince1970: $0) }
        return (SignInToken(value: value, expirationDate: expiry), a.object["account"]?.string ?? "")
    }

    /// Tells the agent an API refused `token`.
    public func rejected(_ token: String) throws(SignInError) {
        let a = try request("POST", "/v1/rejected", headers: ["X-Signin-Token: \(token)"])
        guard a.status == 204 || a.status == 200 else { throw failure(a) }
    }

    /// The agent's refusal as the error a script switches on: not signed in (exit 3), with the agent's reason.
    public func failure(_ a: Answer) -> SignInError {
        let message = a.object["message"]?.string ?? "HTTP \(a.status)"
        return .noPreviousSignIn(reason: .agentRefused(reason: message))
    }

    /// One request on a fresh connection (the protocol's one request per connection).
    public func request(_ method: String, _ target: String, headers: [String] = []) throws(SignInError) -> Answer {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .system(reason: "socket: \(FileIO.errnoText())") }
        defer { close(fd) }
        guard let rc = UnixSocketAddress.with(socketPath, { connect(fd, $0, $1) }) else { throw unavailable("its path is too long") }
        guard rc == 0 else {
            let e = errno
            throw unavailable(e == ENOENT ? "it is gone (the SSH session or the agent ended)" : e == ECONNREFUSED ? "nothing answers on it (the SSH session or the agent ended)"
                              : e == EACCES ? "it is not yours to use" : FileIO.errnoText(e))
        }
        var head = "\(method) \(target) HTTP/1.1\r\nHost: signin-agent\r\nConnection: close\r\n"
        for h in headers { head += h + "\r\n" }
        head += "\r\n"
        var out = Array(head.utf8)
        var sent = 0
        while sent < out.count {
            let n = out.withUnsafeMutableBytes { send(fd, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw unavailable(Self.ended) }
            sent += n
        }
        var response: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16384)
        let deadline = MonotonicClock.now() + timeoutSeconds
        while true {
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let left = deadline - MonotonicClock.now()
            guard left > 0 else { throw unavailable("the agent did not answer within \(Int(timeoutSeconds)) s") }
            let ready = poll(&p, 1, Int32(min(left, 60) * 1000))
            if ready < 0 && errno == EINTR { continue }
            if ready == 0 { continue }
            let n = read(fd, &chunk, chunk.count)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            response += chunk[0..<n]
            guard response.count < 1 << 20 else { throw unavailable("its answer is too large") }
        }
        return try parse(response)
    }

    private func parse(_ bytes: [UInt8]) throws(SignInError) -> Answer {
        // ssh accepts on the remote side, then finds the laptop's end gone: the connection closes with nothing said.
        if bytes.isEmpty { throw unavailable(Self.ended) }
        guard let end = HTTPRequestHead.headEnd(bytes), let head = String(validating: bytes[..<end], as: UTF8.self) else {
            throw unavailable("its answer is not HTTP (is this signin's agent?)")
        }
        let status = head.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        let body = Data(bytes[(end + 4)...])
        return Answer(status: status, object: body.isEmpty ? [:] : (JSONValue.object(from: body) ?? [:]))
    }

    static let ended = "it closed without an answer: the forwarding has ended (its time is up, `signin lock`, or the agent stopped)"

    private func unavailable(_ why: String) -> SignInError {
        .noPreviousSignIn(reason: .agentUnavailable(socket: socketPath, reason: why))
    }
}
