import SignInBase
import SignInProtocol
import SignInStorage
import SignInTransport
import SignInGrant
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// A client of signin's agent (`AgentProtocol`): what `signin token` and the bridges use on a machine reached over
/// SSH, where `SIGNIN_AGENT_SOCK` names the forwarded socket and there is no configuration and no store.
package struct AgentClient: ForwardedTokens {
    public let socketPath: String
    /// How long to wait for an answer (a confirmation on the laptop may take a person's time).
    public var timeoutSeconds = 150.0
    /// The folder the socket must be in, this user's alone (the agent's own socket); nil for a forwarded one.
    let trustedFolder: String?

    /// A client of the socket at `socketPath` (`SIGNIN_AGENT_SOCK`, a forwarded session's).
    public init(socketPath: String) {
        self.socketPath = socketPath
        trustedFolder = nil
    }

    /// A client of this environment's own agent (`AgentProtocol.socketPath`), whose folder is checked first.
    public init(agentOf environment: [String: String]) {
        socketPath = AgentProtocol.socketPath(environment: environment)
        trustedFolder = AgentProtocol.folder(environment: environment)
    }

    /// An answer: the HTTP status and the JSON object (empty for 204).
    public struct Answer: Sendable {
        public let status: Int
        public let object: [String: JSONValue]
    }

    /// The agent's `hello`: its session's restrictions and the hosts its configuration allows.
    public func hello() throws(SignInError) -> Answer { try request("GET", AgentProtocol.Path.hello) }

    /// The agent's `hello`, read: its session and the settings the remote side's bridges need.
    public func greeting() throws(SignInError) -> AgentProtocol.Hello {
        let a = try hello()
        guard a.status == 200 else { throw failure(a) }
        return AgentProtocol.Hello(json: a.object)
    }

    /// The setting `key` of the agent's hello (a family's endpoint): what a family's forwarded rule reads
    /// (`ForwardedTokens`, AWS's STS).
    public func familySetting(_ key: String) throws(SignInError) -> String? {
        try greeting().familySettings[key]
    }

    /// The answer to `request` (of the configuration `profile`, on the agent's own socket), as
    /// `SignInClient.token(_:)` gives it on the machine the agent runs on.
    public func token(_ request: TokenRequest, profile: String? = nil) throws(SignInError) -> IssuedToken {
        let a = try self.request("GET", AgentProtocol.Path.token + "?" + FormEncoding.encode(AgentProtocol.query(request, profile: profile)))
        guard a.status == 200, let answer = AgentProtocol.TokenAnswer(json: a.object) else { throw failure(a) }
        var issued = IssuedToken(token: SignInToken(value: answer.token, expirationDate: answer.expiresAt.map { Date(timeIntervalSince1970: TimeInterval($0)) }),
                                 kind: request.kind, subject: answer.subject, name: answer.account)
        issued.tokenType = answer.tokenType
        issued.dpopProof = answer.dpopProof
        if request.kind == .access {
            issued.resource = request.resource
            issued.audience = request.audience
        }
        return issued
    }

    /// Tells the agent an API refused `token`.
    public func rejected(_ token: String) throws(SignInError) {
        let a = try request("POST", AgentProtocol.Path.rejected, headers: ["\(AgentProtocol.Key.rejectedToken): \(token)"])
        guard a.status == 204 || a.status == 200 else { throw failure(a) }
    }

    /// The agent's refusal as the error a script switches on (`AgentProtocol.Failure.error`).
    public func failure(_ a: Answer) -> SignInError {
        AgentProtocol.Failure(json: a.object, status: a.status).error
    }

    /// Whether the agent at `socketPath` is this environment's: it answers, and serves the store of `environment`
    /// (an agent started under another HOME or data folder is someone else's business). nil: none answers.
    public func servesStore(of environment: [String: String]) -> Bool? {
        guard let a = try? hello(), a.status == 200 else { return nil }
        return AgentProtocol.Hello(json: a.object).store == AgentProtocol.store(environment: environment)
    }

    /// One request on a fresh connection (the protocol's one request per connection). Before anything is sent:
    /// with `trustedFolder`, the socket's folder must be this user's alone; always, the process listening must be
    /// this user's (`SO_PEERCRED`), so a socket another user planted is never told a token or trusted for one.
    /// HTTP/1.1 written here, not through libcurl: the peer check needs the descriptor before a byte is sent, and a
    /// forwarded `signin token` is answered by the static half, which never loads libcurl for it.
    public func request(_ method: String, _ target: String, headers: [String] = []) throws(SignInError) -> Answer {
        if let folder = trustedFolder, let problem = AgentProtocol.folderProblem(folder) { throw unavailable(problem) }
        let fd: Int32
        switch Posix.openSocket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) {
        case .success(let s): fd = s
        case .failure(let e): throw .system(reason: "socket: \(e)")
        }
        defer { Posix.close(fd) }
        guard let connected = UnixSocketAddress.with(socketPath, { a, n in Posix.failure(of: Posix.connect(fd, a, n)) }) else { throw unavailable("its path is too long") }
        if let failure = connected {
            let e = failure.code
            throw unavailable(e == ENOENT ? "it is gone (the SSH session or the agent ended)" : e == ECONNREFUSED ? "nothing answers on it (the SSH session or the agent ended)"
                              : e == EACCES ? "it is not yours to use" : failure.description)
        }
        guard let peer = PeerCredentials.of(fd) else { throw unavailable("who listens on it cannot be told (SO_PEERCRED failed)") }
        guard peer.uid == Posix.geteuid() else { throw unavailable("another user (uid \(peer.uid)) listens on it, not you: it is not your agent") }
        var head = "\(method) \(target) HTTP/1.1\r\nHost: signin-agent\r\nConnection: close\r\n"
        for h in headers { head += h + "\r\n" }
        head += "\r\n"
        let out = Array(head.utf8)
        var sent = 0
        while sent < out.count {
            let n = out.withUnsafeBytes { b in Posix.send(fd, b.baseAddress! + sent, b.count - sent, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw unavailable(Self.ended) }
            sent += n
        }
        var response: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16384)
        let deadline = MonotonicClock.now() + timeoutSeconds
        while true {
            let left = deadline - MonotonicClock.now()
            guard left > 0 else { throw unavailable("the agent did not answer within \(Int(timeoutSeconds)) s") }
            if !Posix.isReadable(fd, milliseconds: Int32(min(left, 60) * 1000)) { continue }
            let n = Posix.read(fd, &chunk, chunk.count)
            if n <= 0 { break }
            response += chunk[0..<n]
            guard response.count < 1 << 20 else { throw unavailable("its answer is too large") }
        }
        return try parse(response)
    }

    func parse(_ bytes: [UInt8]) throws(SignInError) -> Answer {
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
