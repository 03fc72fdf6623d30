import SignInBase
import SignInProtocol
import SignInStorage
import SignInGrant
import SignInTransport
import CSignInSystem
import Dispatch
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// signin's agent: the same token path as `signin token` (`SignInClient.token(_:)`: no network while fresh, one
/// refresh for many callers, the rotation rules, signals held), served on Unix sockets to this user's processes
/// only (`SO_PEERCRED`), in `AgentProtocol`'s small versioned HTTP. A token request crosses the socket as the
/// `TokenRequest` the command built, so `--force-refresh`, `--min-ttl`, `--audience` and
/// `--impersonate-service-account` mean here what they mean locally. It hands out access and ID tokens and their
/// expiry, never a refresh token, the client secret or the store key.
///
/// How each request is answered:
/// 1. A connection from another uid is closed unanswered (the socket is 0600 in a 0700 folder besides).
/// 2. A token request that is not well formed (a kind, `min_ttl` or service account that is none, a configuration
///    name that is a path) is refused with 400, naming the key.
/// 3. On the agent's own socket: any account of any configuration, and the session operations (`signin ssh`
///    creates a forwarded session there, `signin agent --list` lists them, `signin lock` ends them).
/// 4. On a forwarded session's socket: only that session's configuration (another is refused), its accounts, the
///    service-account chains `signin ssh --impersonate-service-account` named, and only until it ends: its
///    `--for` time passed or `signin lock` (its socket then answers that it ended, in signin's words, until the
///    `signin ssh` ends), or the `signin ssh` that made it ended (however it ended: its pidfd wakes the agent; the
///    socket is removed). A refresh the remote side chooses (`force`, a `min_ttl` above a
///    minute that needs one, a rejected token) at most once per `chosenRefreshSeconds` (429 otherwise): remote
///    root cannot make the laptop hammer the provider. With `confirm`, each new account, token kind, service
///    account and audience is first put to the person through the session's askpass program (exit 0: yes); the
///    question waits on its own, so the agent goes on answering everyone else (one question per session at once).
/// 5. Each request served or refused on a forwarded socket is logged (time, remote host, account, token kind; never
///    a token) to `AgentProtocol.logPath`, which is kept under `AgentProtocol.logLimit`.
package final class TokenAgent: @unchecked Sendable {
    public let socketPath: String
    private let environment: [String: String]
    private let makeClient: (String?) throws(SignInError) -> SignInClient
    private let service: LocalService
    private var server: LoopbackServer { service.server }
    private var clients: [String: SignInClient] = [:]
    private var sessions: [String: Session] = [:]
    private var questions: [String: Question] = [:]
    private var stopping = false
    private let log: AgentLog

    /// How long a confirmation question waits for the person.
    static let questionSeconds = 120.0

    typealias Session = ForwardedSession

    /// A question put to the person through askpass, and the requests waiting on its answer.
    struct Question {
        let key: String
        let pid: pid_t
        let pidfd: Int32
        let askedAt: Double
        var waiters: [(id: String, request: TokenRequest)]
    }

    /// Binds the agent's socket in `AgentProtocol.folder` (made 0700). `makeClient` builds the client of a
    /// configuration (nil: the default one; a name; or, for a session `signin ssh -c FILE` opened, an absolute
    /// path), non-interactively.
    public init(environment: [String: String], makeClient: @escaping (String?) throws(SignInError) -> SignInClient) throws(SignInError) {
        self.environment = environment
        self.makeClient = makeClient
        _ = try AgentProtocol.usableFolder(environment: environment)
        socketPath = AgentProtocol.socketPath(environment: environment)
        log = AgentLog(path: AgentProtocol.logPath(environment: environment))
        service = LocalService(try LoopbackServer(unixSocket: socketPath, tag: "main", methods: ["GET", "POST", "DELETE"]))
    }

    /// Serves until `stop()` (or `POST /v1/stop`); then every socket of the agent is removed.
    func run() {
        _ = try? service.server.serve(canceller: service.canceller, tick: 1, notice: { [log] notice in
            if case .refusedPeer(let reason) = notice { log.refused(reason) }
        }, handler: { (r) throws(SignInError) -> (LoopbackResponse, Bool?) in
            let answer = self.answer(r)
            return (answer, self.stopping ? true : nil)
        }, failure: { _ in Self.failure(.init(.internal)) }, onTick: { self.tick() })
    }

    /// Serves on a thread of its own; `onEnd` runs there when serving ends by itself (`POST /v1/stop`).
    public func start(onEnd: @escaping @Sendable () -> Void = {}) { service.start({ [self] in run() }, onEnd: onEnd) }

    /// Ends serving (after the request in hand) and waits until every socket of the agent is removed.
    public func stop() { service.stop() }

    // MARK: Requests

    private func answer(_ r: HTTPRequestHead) -> LoopbackResponse {
        let q = FormEncoding.decode(r.query) ?? [:]
        typealias P = AgentProtocol.Path
        if r.listener == "main" {
            switch (r.method, r.path) {
            case ("GET", P.hello): return hello(nil)
            case ("GET", P.token): return token(q, sessionID: nil)
            case ("POST", P.rejected): return rejected(r, sessionID: nil)
            case ("POST", P.sessions): return createSession(q, peer: r.peer)
            case ("GET", P.sessions): return listSessions()
            case ("POST", P.lock):
                for id in sessions.keys { finish(id, why: "signin lock", remove: false) }
                clients.removeAll()
                return Self.json("200 OK", ["ended": .bool(true)])
            case ("POST", P.stop):
                stopping = true
                return Self.json("200 OK", ["stopping": .bool(true)])
            case ("DELETE", _) where r.path.hasPrefix(P.sessions + "/"):
                let id = String(r.path.dropFirst(P.sessions.count + 1))
                guard sessions[id] != nil else { return Self.failure(.init(.noSession)) }
                end(id, why: "ended by signin ssh")
                return Self.json("200 OK", ["ended": .bool(true)])
            default: return Self.failure(.init(.notFound, "no such request in protocol \(AgentProtocol.version)"))
            }
        }
        guard let id = r.listener.split(separator: ":").last.map(String.init), let session = sessions[id] else {
            return Self.refused("this forwarded session has ended")
        }
        if let (why, remove) = endReason(session) { finish(id, why: why, remove: remove) }
        guard let session = sessions[id], session.ended == nil else {
            return Self.refused("this forwarded session has ended (\(sessions[id]?.ended ?? "the signin ssh that opened it ended"))")
        }
        switch (r.method, r.path) {
        case ("GET", P.hello): return hello(session)
        case ("GET", P.token): return token(q, sessionID: id)
        case ("POST", P.rejected): return rejected(r, sessionID: id)
        default:
            log.session(session, "refused \(r.method) \(r.path) (not a forwarded session's request)")
            return Self.refused("\(r.method) \(r.path) is not served on a forwarded socket")
        }
    }

    private func hello(_ session: Session?) -> LoopbackResponse {
        var h = AgentProtocol.Hello(signinVersion: SignInKitVersion.string)
        if let session {
            h.session = session.info
            if let c = try? client(session.profile) {
                h.gitHosts = GitHosts.patterns(for: c.configuration)
                h.gitResources = c.configuration.gitResources
                h.dockerRegistries = DockerRegistries.patterns(for: c.configuration)
                for family in TokenFamilies.all { h.familySettings.merge(family.forwardedSettings(c.configuration)) { a, _ in a } }
            }
        } else {
            h.store = AgentProtocol.store(environment: environment)
        }
        return .text("200 OK", h.json.text, contentType: "application/json")
    }

    private func client(_ profile: String?) throws(SignInError) -> SignInClient {
        let key = profile ?? ""
        if let c = clients[key] { return c }
        let c = try makeClient(profile)
        clients[key] = c
        return c
    }

    private func token(_ q: [String: String], sessionID: String?) -> LoopbackResponse {
        let request: TokenRequest, asked: String?
        switch AgentProtocol.tokenRequest(q) {
        case .failure(let e): return Self.failure(.init(.badRequest, e.message))
        case .success(let parsed): (request, asked) = parsed
        }
        guard let sessionID, var s = sessions[sessionID] else { return serve(request, profile: asked, sessionID: nil) }
        if s.restrictedToAPIs, let unknown = q.keys.filter({ !AgentProtocol.tokenRequestKeys.contains($0) }).sorted().first {
            log.session(s, "refused \(ForwardedSession.kindName(request)) (the request names \(unknown.withoutControlCharacters), which this agent does not know)")
            return Self.refused("this forwarded session is restricted to APIs and answers only requests it knows; \(unknown.withoutControlCharacters) is not one of them")
        }
        var r: TokenRequest
        switch s.admit(request, profile: asked) {
        case .refused(let logged, let message):
            log.session(s, "refused \(ForwardedSession.kindName(request)) \(logged)")
            return Self.refused(message)
        case .admitted(let admitted): r = admitted
        }
        // Whose token `.configured` comes to, decided before the question and the log, so both name it.
        if case .configured = r.principal, let c = try? client(s.profile) {
            let chain = c.serviceAccountChain(for: .configured)
            r.principal = chain.isEmpty ? .person : .serviceAccount(chain: chain)
        }
        if let refusal = throttle(r, &s) { return refusal }
        sessions[sessionID] = s
        let approval = ForwardedSession.approvalKey(r)
        if s.confirm && !s.approved.contains(approval) { return ask(approval, r, session: s) }
        return serve(r, profile: s.profile, sessionID: sessionID)
    }

    /// A refresh the remote side chooses (`ForwardedSession.mayChooseRefresh`), or nil when this one may go.
    private func throttle(_ r: TokenRequest, _ s: inout Session) -> LoopbackResponse? {
        guard r.serviceAccountChain.isEmpty || r.forceRefresh else { return nil }
        let chosen = r.forceRefresh || (r.minimumValidity > .seconds(60) && ((try? client(s.profile).wouldRefresh(r)) ?? false))
        guard chosen else { return nil }
        if let (ago, wait) = s.mayChooseRefresh(now: MonotonicClock.now()) {
            log.session(s, "refused a forced refresh (another one \(ago) s ago)")
            return Self.failure(.init(.tooMany, "a refresh was forced through this forwarded session \(ago) s ago; the next may be forced in \(wait) s",
                                      retryAfter: wait))
        }
        return nil
    }

    /// The client that answers `r`: for an API signed in to from its address (one the configuration does not list
    /// in `resources`), that API's own sign-in, as the local `signin token --resource URL` answers it, never the
    /// configuration's client at the configured provider; it is reached through a forwarded session only when the
    /// session names the API (`signin ssh --resource URL`). Otherwise the configuration's.
    private func answering(_ r: inout TokenRequest, profile: String?, sessionID: String?) throws(SignInError) -> SignInClient {
        let configured = Result { () throws(SignInError) -> SignInClient in try client(profile) }
        guard let resource = r.resource, r.audience == nil, (try? configured.get())?.configuration.resources.contains(resource) != true else {
            return try configured.get()
        }
        if let sessionID, let s = sessions[sessionID], !s.resources.contains(resource) {
            throw .noPreviousSignIn(reason: .agentRefused(reason: "the API \(resource.withoutControlCharacters) is not forwarded to this machine (on the laptop: signin ssh --resource \(resource.withoutControlCharacters) ...)"))
        }
        // Neither one of the configuration's resources nor signed in to from its address: the person's grant never
        // serves it (as `signin token --resource URL` here refuses it), but through MCP's enterprise-managed
        // authorization (an ID-JAG the grant at the company's IdP buys: `EnterpriseFamily`).
        guard let api = apiClient(resource, configured: try? configured.get()) else {
            if let c = try? configured.get(), c.configuration.enterpriseAuthorization.isEnabled { return c }
            throw .noPreviousSignIn(reason: .nothingStored(issuer: "the API \(resource.withoutControlCharacters)"))
        }
        // The API's sign-in is an account of its own: its current one.
        r.account = nil
        return api
    }

    /// The client of the API at `resource` signed in to from its address, from the store alone, or nil.
    private func apiClient(_ resource: String, configured: SignInClient?) -> SignInClient? {
        let key = "api " + resource
        if let c = clients[key] { return c }
        let directory = configured?.credentialStore?.directory ?? CredentialStore.defaultDirectory(environment: environment)
        guard let known = APIAccess.knownConfiguration(for: resource, storeDirectory: directory) else { return nil }
        let c = SignInClient(configuration: known, environment: environment)
        clients[key] = c
        return c
    }

    /// Whether the agent can answer for the API at `resource`: one of the configuration's `resources`, or an API
    /// signed in to from its address (what `signin ssh --resource` accepts).
    private func knowsAPI(_ resource: String, configured: SignInClient?) -> Bool {
        configured?.configuration.resources.contains(resource) == true || apiClient(resource, configured: configured) != nil
            || configured?.configuration.enterpriseAuthorization.isEnabled == true
    }

    /// The token path's answer to `r`, logged for a forwarded session.
    private func serve(_ asked: TokenRequest, profile: String?, sessionID: String?) -> LoopbackResponse {
        var r = asked
        let kindName = ForwardedSession.kindName(r)
        do throws(SignInError) {
            let issued = try answering(&r, profile: profile, sessionID: sessionID).token(r)
            if let sessionID, let s = sessions[sessionID], s.restrictedToAPIs, issued.evidentlyUnrestricted {
                // The provider ignored the resource indicator: this token would reach every API of the grant.
                log.session(s, "refused \(kindName) (the provider answered a token not restricted to the API)")
                return Self.refused("the provider answered a token for \(r.resource ?? "the API") that is not restricted to it (it ignores resource indicators, RFC 8707), and this forwarded session is restricted to APIs")
            }
            if let sessionID, var s = sessions[sessionID] {
                s.served += 1
                sessions[sessionID] = s
                log.session(s, "served \(kindName) for \(issued.name)" + (r.proofFor.map { " with a DPoP proof for \($0.method) \($0.url.withoutControlCharacters)" } ?? ""))
            }
            return .text("200 OK", AgentProtocol.TokenAnswer(issued).json.text, contentType: "application/json")
        } catch {
            if let sessionID, let s = sessions[sessionID] {
                log.session(s, "could not serve \(kindName)" + (r.proofFor.map { " with a DPoP proof for \($0.method) \($0.url.withoutControlCharacters)" } ?? "") + ": \(error.description)")
            }
            let code: AgentProtocol.Failure.Code
            var target: String?
            switch error {
            case .noPreviousSignIn: code = .notSignedIn
            case .accountNotFound, .ambiguousAccount: code = .noSuchAccount
            case .unsupported: code = .unsupported
            case .targetRefused(_, let t, _): (code, target) = (.targetRefused, t)
            default: code = .failed
            }
            let message = code == .unsupported ? error.description : "on the machine the agent runs on: " + error.description
            return Self.failure(.init(code, message, target: target))
        }
    }

    private func rejected(_ r: HTTPRequestHead, sessionID: String?) -> LoopbackResponse {
        guard let token = r.header(AgentProtocol.Key.rejectedToken.lowercased()), !token.isEmpty else { return Self.failure(.init(.noToken)) }
        guard let sessionID, var s = sessions[sessionID] else {
            try? client(nil).markAccessTokenRejected(token)
            return LoopbackResponse(status: "204 No Content")
        }
        // A rejection is a refresh chosen by the remote side: one per interval.
        if let refusal = throttle(TokenRequest(forceRefresh: true), &s) { return refusal }
        sessions[sessionID] = s
        for account in s.subjects { try? client(s.profile).markAccessTokenRejected(token, account: account) }
        return LoopbackResponse(status: "204 No Content")
    }

    // MARK: Confirmation

    /// Puts the question of `approval` to the person (or joins the one already asked); the answer comes later.
    private func ask(_ approval: String, _ r: TokenRequest, session s: Session) -> LoopbackResponse {
        let waiter = Hex.encode((try? Crypto.randomBytes(8)) ?? [])
        if var pending = questions[s.id] {
            guard pending.key == approval else {
                return Self.refused("another question is waiting for an answer on the machine the session came from; ask again after it")
            }
            pending.waiters.append((waiter, r))
            questions[s.id] = pending
            return .later(waiter)
        }
        let name = s.subjects.firstIndex(of: r.account ?? "").map { s.names[$0] } ?? r.account ?? "the account"
        let kind = r.kind == .id ? "an ID token" : "an access token"
        let what = r.serviceAccountChain.last.map { "\(kind) of service account \($0) (with \(name)'s grant)" } ?? "\(kind) of \(name)"
        let question = "Allow \(s.host) to get \(what)" + (r.audience.map { " for \($0)" } ?? "") + (r.resource.map { " for the API \($0)" } ?? "")
            + r.familyName + "?"
        guard let askpass = s.askpass,
              case .success(let child) = ChildProcess.spawn(path: askpass, argv: [askpass, "signin: " + question], environment: environment) else {
            log.session(s, "refused \(ForwardedSession.kindName(r)) for \(name) (no askpass program to ask with)")
            return Self.refused("the person on the machine the session came from could not be asked")
        }
        let pidfd = signin_pidfd_open(child.pid)
        if pidfd >= 0 { server.wakeFDs.append(pidfd) }
        questions[s.id] = Question(key: approval, pid: child.pid, pidfd: pidfd, askedAt: MonotonicClock.now(), waiters: [(waiter, r)])
        return .later(waiter)
    }

    /// A question's end: its waiters answered (served, or refused), the askpass program reaped.
    private func settle(_ sessionID: String, approved: Bool, why: String) {
        guard let q = questions.removeValue(forKey: sessionID) else { return }
        if q.pidfd >= 0 {
            server.wakeFDs.removeAll { $0 == q.pidfd }
            Posix.close(q.pidfd)
        }
        guard approved, var s = sessions[sessionID] else {
            if let s = sessions[sessionID] { log.session(s, "refused \(q.waiters.first.map { ForwardedSession.kindName($0.request) } ?? "a token") (\(why))") }
            for w in q.waiters { server.complete(w.id, Self.refused("the person on the machine the session came from did not allow this (\(why))")) }
            return
        }
        s.approved.insert(q.key)
        sessions[sessionID] = s
        for w in q.waiters { server.complete(w.id, serve(w.request, profile: s.profile, sessionID: sessionID)) }
    }

    /// The question of a session, if one is waiting, taken back: its askpass program ended and reaped, its waiters
    /// refused with `why`.
    private func withdrawQuestion(_ sessionID: String, why: String) {
        guard let q = questions[sessionID] else { return }
        Posix.kill(q.pid, SIGKILL)
        _ = ChildProcess(pid: q.pid).wait()
        settle(sessionID, approved: false, why: why)
    }

    // MARK: Sessions

    private func createSession(_ q: [String: String], peer: PeerCredentials?) -> LoopbackResponse {
        let asked: AgentProtocol.SessionRequest
        do throws(AgentRequestError) { asked = try AgentProtocol.SessionRequest(query: q) } catch {
            return Self.failure(.init(.badRequest, error.message))
        }
        let profile = asked.profile
        let chains = Set(asked.chains.map { $0.joined(separator: ",") })
        let audiences = Set(asked.audiences), resources = Set(asked.resources)
        let configured: SignInClient?
        do throws(SignInError) { configured = try client(profile) } catch .configNotFound where profile == nil && !resources.isEmpty && audiences.isEmpty && chains.isEmpty && asked.accounts.isEmpty {
            // A machine that signs in only to APIs from their address (MCP servers, say) has no configuration: a session
            // for those APIs alone needs none.
            configured = nil
        } catch {
            return Self.failure(.init(.noConfiguration, error.description))
        }
        // Only APIs this side can answer for: the configuration's resources and the APIs signed in from their address.
        if let unknown = resources.sorted().first(where: { !knowsAPI($0, configured: configured) }) {
            return Self.failure(.init(.notSignedIn, "the API \(unknown.withoutControlCharacters) is neither one of the configuration's resources nor signed in to from its address (`signin login --resource \(unknown.withoutControlCharacters)`)"))
        }
        var subjects: [String] = [], names: [String] = []
        do throws(SignInError) {
            if let c = configured {
                if asked.accounts.isEmpty {
                    guard let current = try c.storedUser() else { throw c.noAccount() }
                    subjects = [current.userID]
                    names = [current.profile.email ?? current.userID]
                }
                for a in asked.accounts {
                    guard let u = try c.storedUser(account: a) else { throw c.noAccount() }
                    subjects.append(u.userID)
                    names.append(u.profile.email ?? u.userID)
                }
            } else {
                // With no configuration, the APIs' own sign-ins are the session's accounts.
                for resource in resources.sorted() {
                    guard let u = try apiClient(resource, configured: nil)?.storedUser() else { throw APICommandConfiguration.notSignedIn(to: resource) }
                    subjects.append(u.userID)
                    names.append(u.profile.email ?? u.userID)
                }
            }
        } catch {
            return Self.failure(.init(.notSignedIn, error.description))
        }
        // The session lives as long as the process that asked for it: the kernel says when that ends, however it ends.
        let pidfd = peer.map { signin_pidfd_open($0.pid) } ?? -1
        let id = Hex.encode((try? Crypto.randomBytes(8)) ?? [])
        let socket = AgentProtocol.folder(environment: environment) + "/fwd-\(id).sock"
        do throws(SignInError) { try server.addUnixListener(path: socket, tag: "fwd:\(id)") } catch {
            if pidfd >= 0 { Posix.close(pidfd) }
            return Self.failure(.init(.socket, error.description))
        }
        if pidfd >= 0 { server.wakeFDs.append(pidfd) }
        let seconds = asked.seconds
        let session = Session(id: id, socket: socket, profile: profile, subjects: subjects, names: names, chains: chains,
                              expiresAt: seconds.map { Date(timeIntervalSinceNow: Double($0)) }, owner: peer, ownerPidFD: pidfd,
                              ownerStart: peer.flatMap { Self.startTime(of: $0.pid) }, confirm: asked.askpass != nil,
                              askpass: asked.askpass.flatMap { $0.isEmpty ? nil : $0 }, host: asked.host, createdAt: Date())
        var restricted = session
        restricted.audiences = audiences
        restricted.resources = resources
        sessions[id] = restricted
        log.session(session, "session forwarded: \(names.joined(separator: ", "))" + (chains.isEmpty ? "" : " (impersonating \(chains.sorted().joined(separator: "; ")))")
            + (restricted.restrictedToAPIs ? " (only tokens for \((audiences.sorted() + resources.sorted()).joined(separator: ", ")))" : "")
            + (seconds.map { " for \($0) s" } ?? " for the SSH session") + (session.confirm ? ", each new request confirmed" : ""))
        let created = AgentProtocol.SessionCreated(id: id, socket: socket, expiresAt: session.expiresAt.map { Int($0.timeIntervalSince1970) })
        return .text("200 OK", created.json.text, contentType: "application/json")
    }

    private func listSessions() -> LoopbackResponse {
        Self.json("200 OK", [AgentProtocol.Key.sessions: .array(sessions.values.filter { $0.ended == nil }.sorted { $0.createdAt < $1.createdAt }.map { $0.info.json })])
    }

    /// Why a session is over, or nil while it holds; `remove`: its socket goes too (the `signin ssh` that opened it
    /// ended, so no one is left to tell).
    private func endReason(_ s: Session) -> (why: String, remove: Bool)? {
        let gone: Bool
        if s.ownerPidFD >= 0 {
            gone = Posix.isReadable(s.ownerPidFD, milliseconds: 0)
        } else {
            gone = s.owner.map { Self.startTime(of: $0.pid) != s.ownerStart } ?? false
        }
        if gone { return ("the signin ssh that opened it ended", true) }
        if s.ended == nil, let e = s.expiresAt, e <= Date() { return ("its time is up", false) }
        return nil
    }

    /// Ends a session: it serves nothing more; with `remove` its socket goes too, else it stays to say why.
    private func finish(_ id: String, why: String, remove: Bool) {
        if remove { return end(id, why: why) }
        guard var s = sessions[id], s.ended == nil else { return }
        s.ended = why
        sessions[id] = s
        withdrawQuestion(id, why: "the session ended")
        log.session(s, "session ended: \(why) (\(s.served) served)")
    }

    /// Each wake of the loop (a second, or a pidfd that became readable): sessions that are over end, questions
    /// the person answered (or left unanswered too long) are settled.
    private func tick() {
        for (id, s) in sessions { if let (why, remove) = endReason(s) { finish(id, why: why, remove: remove) } }
        for (id, q) in questions {
            if let ended = ChildProcess(pid: q.pid).wait(block: false) {
                let yes = ended == .exited(0)
                settle(id, approved: yes, why: yes ? "allowed" : "not confirmed")
            } else if MonotonicClock.now() - q.askedAt > Self.questionSeconds {
                withdrawQuestion(id, why: "no answer within \(Int(Self.questionSeconds)) s")
            }
        }
    }

    private func end(_ id: String, why: String) {
        guard let s = sessions.removeValue(forKey: id) else { return }
        let why = s.ended.map { "\($0), then \(why)" } ?? why
        withdrawQuestion(id, why: "the session ended")
        if s.ownerPidFD >= 0 {
            server.wakeFDs.removeAll { $0 == s.ownerPidFD }
            Posix.close(s.ownerPidFD)
        }
        server.removeListener(tag: "fwd:\(id)")
        log.session(s, "session ended: \(why) (\(s.served) served)")
    }

    /// The process's start time (`/proc/PID/stat`, field 22): a pid the system gave to another process since differs.
    /// (Read as a stream: /proc files have no size.)
    static func startTime(of pid: Int32) -> String? {
        guard let data = try? FileIO.readStream(path: "/proc/\(pid)/stat", limit: 4096), let text = String(validating: data, as: UTF8.self),
              let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        return fields.count > 19 ? String(fields[19]) : nil
    }

    // MARK: Answers

    static func refused(_ message: String) -> LoopbackResponse { failure(.init(.refused, message)) }

    /// A refusal or failure, typed as both ends read it.
    static func failure(_ f: AgentProtocol.Failure) -> LoopbackResponse {
        .text(f.code.status, f.json.text, contentType: "application/json")
    }

    static func json(_ status: String, _ o: [String: JSONValueOut]) -> LoopbackResponse {
        .text(status, JSONValueOut.object(o).text, contentType: "application/json")
    }
}
