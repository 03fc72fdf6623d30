import Dispatch
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// signin's agent: the same token path as `signin token` (no network while fresh, one refresh for many callers,
/// the rotation rules, signals held), served on Unix sockets to this user's processes only (`SO_PEERCRED`), in
/// `AgentProtocol`'s small versioned HTTP. It hands out access and ID tokens and their expiry, never a refresh
/// token, the client secret or the store key.
///
/// How each request is answered:
/// 1. A connection from another uid is closed unanswered (the socket is 0600 in a 0700 folder besides).
/// 2. On the agent's own socket: any account of any configuration, and the session operations (`signin ssh`
///    creates a forwarded session there, `signin agent --list` lists them, `signin lock` ends them).
/// 3. On a forwarded session's socket: only that session's accounts of its one configuration, and only until it
///    ends: its `--for` time passed, or the `signin ssh` that made it exited (checked each second, and at each
///    request), or `signin lock`; then its socket is removed. With `confirm`, each new account, token kind and
///    audience is first put to the person through the session's askpass program (exit 0: yes).
/// 4. Each request served or refused on a forwarded socket is logged (time, remote host, account, token kind; never
///    a token) to `AgentProtocol.logPath`.
@_spi(CLI) public final class TokenAgent: @unchecked Sendable {
    public let socketPath: String
    private let environment: [String: String]
    private let makeClient: (String?) throws(SignInError) -> SignInClient
    private let server: LoopbackServer
    private let canceller = Canceller()
    private var clients: [String: SignInClient] = [:]
    private var sessions: [String: Session] = [:]
    private var stopping = false
    private let logPath: String

    struct Session {
        let id: String
        let socket: String
        let profile: String?
        /// Allowed accounts: `sub`s, and the e-mails they were named by.
        let subjects: [String]
        let names: [String]
        let expiresAt: Date?
        let owner: PeerCredentials?
        let ownerStart: String?
        let confirm: Bool
        let askpass: String?
        let host: String
        let createdAt: Date
        var approved: Set<String> = []
        var served = 0
    }

    /// Binds the agent's socket in `AgentProtocol.folder` (made 0700). `makeClient` builds the client of a
    /// configuration (nil: the default one), non-interactively.
    public init(environment: [String: String], makeClient: @escaping (String?) throws(SignInError) -> SignInClient) throws(SignInError) {
        self.environment = environment
        self.makeClient = makeClient
        let folder = AgentProtocol.folder(environment: environment)
        if let failed = Directory.create(folder) { throw .storeUnwritable(path: failed.path, reason: failed.reason) }
        var st = stat()
        guard lstat(folder, &st) == 0, st.st_uid == geteuid(), (st.st_mode & S_IFMT) == S_IFDIR else {
            throw .system(reason: "\(folder) is not a folder of yours; remove it")
        }
        chmod(folder, 0o700)
        socketPath = AgentProtocol.socketPath(environment: environment)
        logPath = AgentProtocol.logPath(environment: environment)
        server = try LoopbackServer(unixSocket: socketPath, tag: "main", methods: ["GET", "POST", "DELETE"])
    }

    /// Serves until `stop()` (or `POST /v1/stop`); then every socket of the agent is removed.
    public func run() {
        _ = try? server.serve(until: .greatestFiniteMagnitude, canceller: canceller, tick: 1, notice: { [logPath] notice in
            if case .refusedPeer(let reason) = notice { Self.append(logPath, "refused: \(reason)") }
        }, handler: { (r) throws(SignInError) -> (LoopbackResponse, Bool?) in
            let answer = self.answer(r)
            return (answer, self.stopping ? true : nil)
        }, failure: { _ in Self.json("500 Internal Server Error", ["error": .string("internal")]) }, onTick: { self.expire() })
        server.close()
    }

    private let finished = DispatchSemaphore(value: 0)
    private let running = Locked(false)

    /// Serves on a thread of its own; `onEnd` runs there when serving ends by itself (`POST /v1/stop`).
    public func start(onEnd: @escaping @Sendable () -> Void = {}) {
        running.withLock { $0 = true }
        DedicatedThread.start(canceller: nil, { [self] in
            run()
            if !canceller.isCanceled { onEnd() }
        }, then: { [finished] _ in finished.signal() })
    }

    /// Ends serving (after the request in hand) and waits until every socket of the agent is removed.
    public func stop() {
        canceller.cancel()
        if running.withLock({ $0 }) { finished.wait() }
    }

    // MARK: Requests

    private func answer(_ r: HTTPRequestHead) -> LoopbackResponse {
        let q = FormEncoding.decode(r.query) ?? [:]
        if r.listener == "main" {
            switch (r.method, r.path) {
            case ("GET", "/v1/hello"): return hello(nil)
            case ("GET", "/v1/token"):
                var none: Session?
                return token(q, session: &none)
            case ("POST", "/v1/rejected"): return rejected(r, session: nil)
            case ("POST", "/v1/sessions"): return createSession(q, peer: r.peer)
            case ("GET", "/v1/sessions"): return listSessions()
            case ("POST", "/v1/lock"):
                for id in sessions.keys { end(id, why: "signin lock") }
                clients.removeAll()
                return Self.json("200 OK", ["ended": .bool(true)])
            case ("POST", "/v1/stop"):
                stopping = true
                return Self.json("200 OK", ["stopping": .bool(true)])
            case ("DELETE", _) where r.path.hasPrefix("/v1/sessions/"):
                let id = String(r.path.dropFirst("/v1/sessions/".count))
                guard sessions[id] != nil else { return Self.json("404 Not Found", ["error": .string("no_session")]) }
                end(id, why: "ended by signin ssh")
                return Self.json("200 OK", ["ended": .bool(true)])
            default: return Self.json("404 Not Found", ["error": .string("not_found"), "message": .string("no such request in protocol \(AgentProtocol.version)")])
            }
        }
        guard let id = r.listener.split(separator: ":").last.map(String.init), var session = sessions[id] else {
            return Self.refused("this forwarded session has ended")
        }
        if let why = endReason(session) {
            end(id, why: why)
            return Self.refused("this forwarded session has ended (\(why))")
        }
        switch (r.method, r.path) {
        case ("GET", "/v1/hello"): return hello(session)
        case ("GET", "/v1/token"):
            var held: Session? = session
            let answer = token(q, session: &held)
            if let held { session = held }
            sessions[id] = session
            return answer
        case ("POST", "/v1/rejected"): return rejected(r, session: session)
        default:
            log(session, "refused \(r.method) \(r.path) (not a forwarded session's request)")
            return Self.refused("\(r.method) \(r.path) is not served on a forwarded socket")
        }
    }

    private func hello(_ session: Session?) -> LoopbackResponse {
        var o: [String: JSONValueOut] = ["protocol": .int(AgentProtocol.version), "signin": .string(SignInKitVersion.string)]
        if let session {
            o["session"] = .object(Self.describe(session))
            if let c = try? client(session.profile) {
                o["git_hosts"] = .array(GitHosts.patterns(for: c.configuration).map { .string($0) })
                o["docker_registries"] = .array(DockerRegistries.patterns(for: c.configuration).map { .string($0) })
            }
        } else {
            o["session"] = .null
        }
        return Self.json("200 OK", o)
    }

    private func client(_ profile: String?) throws(SignInError) -> SignInClient {
        let key = profile ?? ""
        if let c = clients[key] { return c }
        let c = try makeClient(profile)
        clients[key] = c
        return c
    }

    private func token(_ q: [String: String], session: inout Session?) -> LoopbackResponse {
        let kind: TokenKind = q["kind"] == "id" ? .id : .access
        let kindName = kind == .id ? "ID token" : "access token"
        let minTTL = min(3000, max(0, Int(q["min_ttl"] ?? "") ?? 60))
        var account = q["account"].flatMap { $0.isEmpty ? nil : $0 }
        let profile = session?.profile ?? q["profile"].flatMap { $0.isEmpty ? nil : $0 }
        if let s = session {
            if let asked = account {
                guard let i = s.names.firstIndex(where: { $0.lowercased() == asked.lowercased() }) ?? s.subjects.firstIndex(of: asked) else {
                    log(s, "refused \(kindName) for \(asked) (not forwarded)")
                    return Self.refused("\(asked) is not forwarded to this machine (forwarded: \(s.names.joined(separator: ", ")))")
                }
                account = s.subjects[i]
            } else {
                account = s.subjects.first
            }
            let approval = "\(kind)|\(account ?? "")"
            if s.confirm && !s.approved.contains(approval) {
                let name = s.subjects.firstIndex(of: account ?? "").map { s.names[$0] } ?? account ?? "the account"
                guard confirm(s, "Allow \(s.host) to get an \(kindName) of \(name)?") else {
                    log(s, "refused \(kindName) for \(name) (not confirmed)")
                    return Self.refused("the person on the machine the session came from did not allow this")
                }
                session?.approved.insert(approval)
            }
        }
        do throws(SignInError) {
            let user = try client(profile).restore(account: account, minimumValidity: .seconds(minTTL), token: kind)
            guard let t = kind == .id ? user.idToken : user.accessToken else { throw .noPreviousSignIn(reason: .noToken(kind)) }
            let who = user.profile.email ?? user.userID
            if let s = session {
                session?.served += 1
                log(s, "served \(kindName) for \(who)")
            }
            return Self.json("200 OK", ["token": .string(t.value), "expires_at": t.expirationDate.map { .int(Int($0.timeIntervalSince1970)) } ?? .null,
                                        "account": .string(who), "kind": .string(kind == .id ? "id" : "access")])
        } catch {
            if let s = session { log(s, "could not serve \(kindName): \(error.description)") }
            let code: String
            switch error {
            case .noPreviousSignIn: code = "not_signed_in"
            case .accountNotFound, .ambiguousAccount: code = "no_such_account"
            default: code = "failed"
            }
            return Self.json(code == "failed" ? "502 Bad Gateway" : "409 Conflict", ["error": .string(code), "message": .string("on the machine the agent runs on: " + error.description)])
        }
    }

    private func rejected(_ r: HTTPRequestHead, session: Session?) -> LoopbackResponse {
        guard let token = r.header("x-signin-token"), !token.isEmpty else { return Self.json("400 Bad Request", ["error": .string("no_token")]) }
        if let session {
            for account in session.subjects { try? client(session.profile).markAccessTokenRejected(token, account: account) }
        } else {
            try? client(nil).markAccessTokenRejected(token)
        }
        return LoopbackResponse(status: "204 No Content")
    }

    // MARK: Sessions

    private func createSession(_ q: [String: String], peer: PeerCredentials?) -> LoopbackResponse {
        let profile = q["profile"].flatMap { $0.isEmpty ? nil : $0 }
        let c: SignInClient
        do throws(SignInError) { c = try client(profile) } catch {
            return Self.json("409 Conflict", ["error": .string("no_configuration"), "message": .string(error.description)])
        }
        var subjects: [String] = [], names: [String] = []
        let asked = (q["accounts"] ?? "").split(separator: ",").map { $0.trimmingWhitespace }.filter { !$0.isEmpty }
        do throws(SignInError) {
            if asked.isEmpty {
                guard let current = try c.storedUser() else { throw c.noAccount() }
                subjects = [current.userID]
                names = [current.profile.email ?? current.userID]
            }
            for a in asked {
                guard let u = try c.storedUser(account: a) else { throw c.noAccount() }
                subjects.append(u.userID)
                names.append(u.profile.email ?? u.userID)
            }
        } catch {
            return Self.json("409 Conflict", ["error": .string("not_signed_in"), "message": .string(error.description)])
        }
        let id = Hex.encode((try? Crypto.randomBytes(8)) ?? [])
        let socket = AgentProtocol.folder(environment: environment) + "/fwd-\(id).sock"
        do throws(SignInError) { try server.addUnixListener(path: socket, tag: "fwd:\(id)") } catch {
            return Self.json("500 Internal Server Error", ["error": .string("socket"), "message": .string(error.description)])
        }
        let seconds = Int(q["seconds"] ?? "").flatMap { $0 > 0 ? $0 : nil }
        let session = Session(id: id, socket: socket, profile: profile, subjects: subjects, names: names,
                              expiresAt: seconds.map { Date(timeIntervalSinceNow: Double($0)) }, owner: peer,
                              ownerStart: peer.flatMap { Self.startTime(of: $0.pid) }, confirm: q["confirm"] == "1",
                              askpass: q["askpass"].flatMap { $0.isEmpty ? nil : $0 }, host: (q["host"] ?? "?").withoutControlCharacters, createdAt: Date())
        sessions[id] = session
        log(session, "session forwarded: \(names.joined(separator: ", "))" + (seconds.map { " for \($0) s" } ?? " for the SSH session") + (session.confirm ? ", each new request confirmed" : ""))
        return Self.json("200 OK", ["id": .string(id), "socket": .string(socket), "expires_at": session.expiresAt.map { .int(Int($0.timeIntervalSince1970)) } ?? .null])
    }

    private func listSessions() -> LoopbackResponse {
        Self.json("200 OK", ["sessions": .array(sessions.values.sorted { $0.createdAt < $1.createdAt }.map { .object(Self.describe($0)) })])
    }

    private static func describe(_ s: Session) -> [String: JSONValueOut] {
        ["id": .string(s.id), "host": .string(s.host), "accounts": .array(s.names.map { .string($0) }), "profile": s.profile.map { .string($0) } ?? .null,
         "expires_at": s.expiresAt.map { .int(Int($0.timeIntervalSince1970)) } ?? .null, "confirm": .bool(s.confirm), "served": .int(s.served),
         "created_at": .int(Int(s.createdAt.timeIntervalSince1970))]
    }

    /// Why a session is over, or nil while it holds.
    private func endReason(_ s: Session) -> String? {
        if let e = s.expiresAt, e <= Date() { return "its time is up" }
        if let owner = s.owner, Self.startTime(of: owner.pid) != s.ownerStart { return "the signin ssh that opened it ended" }
        return nil
    }

    private func expire() {
        for (id, s) in sessions { if let why = endReason(s) { end(id, why: why) } }
    }

    private func end(_ id: String, why: String) {
        guard let s = sessions.removeValue(forKey: id) else { return }
        server.removeListener(tag: "fwd:\(id)")
        log(s, "session ended: \(why) (\(s.served) served)")
    }

    /// The process's start time (`/proc/PID/stat`, field 22): a pid the system gave to another process since differs.
    static func startTime(of pid: Int32) -> String? {
        guard let data = try? FileIO.read(path: "/proc/\(pid)/stat", limit: 4096), let text = String(validating: data, as: UTF8.self),
              let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        return fields.count > 19 ? String(fields[19]) : nil
    }

    private func confirm(_ s: Session, _ question: String) -> Bool {
        guard let askpass = s.askpass else { return false }
        switch ChildProcess.spawn(path: askpass, argv: [askpass, "signin: " + question], environment: environment) {
        case .failure: return false
        case .success(let child):
            var status: Int32 = 0
            while waitpid(child.pid, &status, 0) < 0 && errno == EINTR {}
            return (status & 0x7f) == 0 && ((status >> 8) & 0xff) == 0
        }
    }

    // MARK: Output

    private func log(_ s: Session, _ what: String) {
        Self.append(logPath, "session \(s.id) from \(s.host): \(what)")
    }

    static func append(_ path: String, _ line: String) {
        let folder = PathName(path: path).deletingLastPathComponent
        _ = Directory.create(folder)
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var bytes = Array((Date().formatted(.iso8601) + " " + line.withoutControlCharacters + "\n").utf8)
        _ = bytes.withUnsafeMutableBytes { write(fd, $0.baseAddress, $0.count) }
    }

    static func refused(_ message: String) -> LoopbackResponse {
        json("403 Forbidden", ["error": .string("refused"), "message": .string(message)])
    }

    static func json(_ status: String, _ o: [String: JSONValueOut]) -> LoopbackResponse {
        .text(status, JSONValueOut.object(o).text, contentType: "application/json")
    }
}
