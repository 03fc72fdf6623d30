import SignInKit
import SignInBase
import SignInTransport
import FoundationEssentials

/// An MCP client's transport to one remote MCP server, signed in: every message a client sends goes to the server,
/// and every message the server sends comes back through `receive`, as MCP's HTTP transports carry them.
///
/// **Streamable HTTP** (MCP 2025-03-26, 2025-06-18, 2025-11-25): each message is its own POST (`Accept:
/// application/json, text/event-stream`); a request's answer is one JSON body or an event stream whose messages
/// (progress, logs, the server's own requests, then the answer) are handed on as they arrive, and left once the
/// answer came. `Mcp-Session-Id` from the initialize answer and `MCP-Protocol-Version` as negotiated go on every
/// later request. After `notifications/initialized`, a GET stream carries what the server sends of its own accord
/// (405: none), reconnected with `Last-Event-ID` after the server's `retry`; a POST stream closed before its answer is
/// resumed the same way. A 404 for the session: the client's own initialize and `initialized` are sent again, and the
/// request after them, once. Requests run at once, each answered whenever the server answers it; a request the client
/// cancels (`notifications/cancelled`) has its POST ended. `close` waits for what is pending (up to a bound), then
/// ends the session with DELETE.
///
/// **HTTP+SSE** (MCP 2024-11-05): with `.auto`, an initialize POST refused with a 4xx falls back to it: the GET event
/// stream, its `endpoint` event, and each message POSTed there; answers come on the stream.
///
/// **Sign-in**: each request carries `authorization`'s headers; a 401 or 403 is put to it (a refresh, a new sign-in,
/// a step-up for the scopes a 403 names), and a `.retry` sends the request again, once.
///
/// **Never a hang**: a request whose POST fails (the server down, an HTTP error, the session ended twice, a sign-in
/// that failed) is answered with a JSON-RPC error saying why, through `receive` like any answer; no token is in it.
public final class MCPClientTransport: Sendable {
    /// Which of MCP's HTTP transports to speak.
    public enum Kind: String, Sendable, CaseIterable {
        /// Streamable HTTP, falling back to HTTP+SSE when the server refuses the initialize POST with a 4xx.
        case auto
        /// Streamable HTTP only.
        case streamableHTTP = "http"
        /// HTTP+SSE (2024-11-05) only.
        case sse
    }

    /// The MCP server's endpoint (the URL a client is configured with).
    public let url: String
    public let kind: Kind
    private let authorization: (any MCPAuthorization)?
    private let extraHeaders: [String]
    private let receive: @Sendable (JSONRPCMessage) -> Void
    private let notice: @Sendable (String) -> Void
    private let failedToStart: @Sendable (SignInError) -> Void
    private let streams: HTTPStreams
    private let state = Locked(State())

    private struct State {
        var mode: Mode = .undecided
        var sessionID: String?
        var protocolVersion: String?
        /// The client's initialize and `initialized`, sent again for a new session after a 404.
        var initialize: JSONRPCMessage?
        var initialized: JSONRPCMessage?
        /// Bumped by each (re)initialize: a 404 seen on an older session is already dealt with.
        var generation = 0
        var initializing: Task<Void, Never>?
        var reinitializing: Task<Bool, Never>?
        var listening: Task<Void, Never>?
        /// The GET stream was refused (401, 403): opened again after the next request goes through.
        var streamPaused = false
        /// HTTP+SSE: where messages are POSTed (the `endpoint` event's address).
        var legacyEndpoint: String?
        /// HTTP+SSE: why the `endpoint` event was refused (another origin, not http(s)): nothing is sent anywhere.
        var legacyRefusal: String?
        /// HTTP+SSE: the GET stream was refused with this status and challenge (a sign-in may mend it).
        var legacyStreamRefusal: (Int, String?)?
        var legacyWaiters: [CheckedContinuation<String?, Never>] = []
        /// Requests sent whose answers have not come, and the work sending each.
        var pending: [JSONRPCMessage.ID: Task<Void, Never>] = [:]
        /// Notifications and responses on their way to the server (a client's answer to the server's request).
        var sending = 0
        var idle: Bool { pending.isEmpty && sending == 0 }
        /// Who waits for the pending work to end (`close`), each by a number of its own so a cancelled wait can leave.
        var drained: [Int: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter = 0
        var closed = false
        /// Why the first initialize failed, when it could not reach the server or sign in.
        var startFailure: SignInError?
        /// MCP 2026-07-28: the revision the client's last modern request named (its notifications go with it).
        var modernVersion: String?
        /// Each tool's `Mcp-Param-*` headers, from the `tools/list` answers handed on: its arguments' paths and
        /// header names (`x-mcp-header` in its input schema).
        var parameterHeaders: [String: [(path: [String], name: String)]] = [:]
        /// How many requests of its own the transport made (their ids: `signin-tools-N`).
        var ownRequests = 0
    }

    private enum Mode { case undecided, streamable, legacy }

    /// A transport to the MCP server at `url`. `authorization`: the OAuth layer (nil: no `Authorization` header);
    /// `headers`: more headers for every request (`Name: value`, a server that wants an API key, say); `receive`: each
    /// message from the server, and each error answer the transport makes, in the order they come (called from any
    /// thread, one at a time); `notice`: what a person should know (a session started again, a stream that broke),
    /// never a token; `connectTimeout` and `caFile`: how long a connection may take, and the certificate authorities
    /// to trust instead of the system's; `proxy`: the proxy for every request beyond this machine (nil: as the
    /// environment says); `failedToStart`: the client's first initialize could not reach the server or
    /// sign in (after its error answer went through `receive`).
    public init(url: String, kind: Kind = .auto, authorization: (any MCPAuthorization)?, headers: [String] = [],
                connectTimeout: Duration = .seconds(10), caFile: String? = nil, proxy: String? = nil,
                receive: @escaping @Sendable (JSONRPCMessage) -> Void, notice: @escaping @Sendable (String) -> Void = { _ in },
                failedToStart: @escaping @Sendable (SignInError) -> Void = { _ in }) {
        self.url = url
        self.failedToStart = failedToStart
        self.kind = kind
        self.authorization = authorization
        self.extraHeaders = headers
        self.notice = notice
        self.streams = HTTPStreams(settings: HTTPSettings(connectTimeout: max(1, Int(connectTimeout.components.seconds)), caFile: caFile, proxy: proxy))
        // libcurl (and the libraries it links) loads meanwhile, while the sign-in is read from the store.
        DedicatedThread.start(canceller: nil, { try? HTTPClient.loadLibrary() }, then: { _ in })
        let state = self.state
        self.receive = { message in
            // An answer that came is no longer pending; one to a request no longer pending (the client cancelled it,
            // or the transport closed) is not delivered: the client was told it is abandoned.
            if case .response(let id?) = message.kind {
                let (wanted, waiters): (Bool, [CheckedContinuation<Void, Never>]) = state.withLock { s in
                    guard s.pending.removeValue(forKey: id) != nil else { return (false, []) }
                    guard s.idle else { return (true, []) }
                    defer { s.drained = [:] }
                    return (true, Array(s.drained.values))
                }
                if wanted { receive(message) }
                for w in waiters { w.resume() }
            } else {
                receive(message)
            }
        }
    }

    /// Why the client's first initialize failed (the server unreachable, the sign-in refused), once it has; a bridge
    /// then ends, as the client has nothing to talk to.
    public var startFailure: SignInError? { state.withLock { $0.startFailure } }

    /// Sends `message` to the server; its answer, and anything the server sends meanwhile, come through `receive`.
    /// Returns at once: requests go at the same time, each on its own.
    public func send(_ message: JSONRPCMessage) {
        if message.method == "notifications/cancelled", let id = cancelledID(message) {
            // The client abandoned the request: its POST ends, and no answer is made for it. The client's first
            // initialize is not cut: what it waits on is the first sign-in, in a browser the person may be finishing;
            // it goes on, so the client's next initialize uses that sign-in instead of opening a second browser.
            let task = state.withLock { s -> Task<Void, Never>? in
                let t = s.pending.removeValue(forKey: id)
                return s.initialize?.requestID == id ? nil : t
            }
            task?.cancel()
            releaseDrainedIfEmpty()
        }
        state.withLock { s in
            guard !s.closed else { return }
            let isRequest = message.requestID != nil
            if !isRequest { s.sending += 1 }
            // On a thread of its own: the POST runs in place, the answer handed on from there (`BlockingTaskExecutor`).
            let task = Task(executorPreference: BlockingTaskExecutor.shared) {
                await self.deliver(message)
                if !isRequest {
                    self.state.withLock { $0.sending -= 1 }
                    self.releaseDrainedIfEmpty()
                }
            }
            if let id = message.requestID { s.pending[id] = task }
            if message.method == "initialize", s.initialize == nil {
                s.initialize = message
                s.initializing = task
            }
            if message.method == "notifications/initialized" { s.initialized = message }
        }
    }

    /// Waits for the pending requests' answers up to `bound`, abandons the rest (their work cancelled: a sign-in waiting
    /// on the browser, a refresh, a POST), ends the session (DELETE, itself bounded by `ending`; a 405 is fine) and the
    /// streams. Returns within `bound` plus `ending` whatever is pending. Nothing is sent after it.
    public func close(waitingUpTo bound: Duration = .seconds(1), ending: Duration = .milliseconds(700)) async {
        let alreadyClosed = state.withLock { s -> Bool in
            defer { s.closed = true }
            return s.closed
        }
        guard !alreadyClosed else { return }
        await Self.race(bound) { await self.drained() }
        let (tasks, listening, session, mode) = state.withLock { s in
            defer { s.pending = [:]; s.listening = nil }
            return (Array(s.pending.values), s.listening, s.sessionID, s.mode)
        }
        tasks.forEach { $0.cancel() }
        listening?.cancel()
        releaseDrainedIfEmpty()
        if mode == .streamable, let session {
            let headers = requestHeaders(session: session, version: state.withLock { $0.protocolVersion })
            let (streams, url, authorization) = (self.streams, self.url, self.authorization)
            await Self.race(ending) {
                // The held token (no sign-in or refresh of its own): the session ends with what it had, or not at all.
                let auth = (try? await authorization?.backgroundHeaders(method: "DELETE", url: URL(string: url)!)) ?? [:]
                _ = try? await offPool("ending the MCP session") { (_) throws(SignInError) -> Int in
                    try streams.exchange(method: "DELETE", url: url, endpoint: "MCP server (\(url))", headers: headers + Self.lines(auth)) { _ in .more }.head.status
                }
            }
        }
    }

    /// Runs `work` for at most `bound`: then it is cancelled, and what it waits for (a transfer, a wait) ends with it.
    static func race(_ bound: Duration, _ work: @escaping @Sendable () async -> Void) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await work() }
            group.addTask { try? await Task.sleep(for: bound) }
            await group.next()
            group.cancelAll()
        }
    }

    // MARK: Sending

    private func deliver(_ message: JSONRPCMessage) async {
        // MCP 2026-07-28: each request carries its revision; nothing waits for a handshake, no session is used.
        if let modern = message.modernProtocolVersion {
            state.withLock { $0.modernVersion = modern }
            await post(message, replay: false, modern: modern)
            return
        }
        if message.requestID == nil, message.method != "notifications/initialized", let modern = state.withLock({ $0.initialize == nil ? $0.modernVersion : nil }) {
            // A modern client's notification (no handshake was made): as its requests go.
            await post(message, replay: false, modern: modern)
            return
        }
        if message.method != "initialize", let first = state.withLock({ $0.initializing }) { await first.value }
        let mode = state.withLock { $0.mode }
        if message.method == "initialize" && mode == .undecided {
            await start(message)
            return
        }
        if mode == .legacy {
            await postLegacy(message)
        } else {
            await post(message, replay: false)
        }
    }

    /// The client's first initialize: streamable HTTP, else (`.auto`, a 4xx) HTTP+SSE.
    private func start(_ message: JSONRPCMessage) async {
        if kind != .sse {
            state.withLock { $0.mode = .streamable }
            let outcome = await post(message, replay: false, fallingBack: kind == .auto)
            guard outcome == .refusedInitialize else { return }
            notice("\(url) refused streamable HTTP; trying the HTTP+SSE transport (MCP 2024-11-05)")
        }
        state.withLock { $0.mode = .legacy }
        do throws(SignInError) {
            try await connectLegacy()
        } catch {
            fail(message, error, starting: true)
            return
        }
        await postLegacy(message)
    }

    private enum Outcome: Equatable { case done, refusedInitialize }

    /// One message POSTed (streamable HTTP), its answer read and handed on; a 401 or 403 put to the authorization
    /// and the message sent again once; a 404 for the session: a new session, then the message again, once.
    ///
    /// `modern`: the message is of MCP 2026-07-28 (or later), naming this revision: no session, its own
    /// `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*` headers; a `-32020` (a header the server
    /// wanted) lists the tools again and sends it once more.
    @discardableResult
    private func post(_ message: JSONRPCMessage, replay: Bool, fallingBack: Bool = false, modern: String? = nil) async -> Outcome {
        var authorized = false, renewed = false, target = url, hops = 0, relisted = false
        let isInitialize = message.method == "initialize" && modern == nil
        while !Task.isCancelled {
            let (stateSession, stateVersion, generation) = state.withLock { ($0.sessionID, $0.protocolVersion, $0.generation) }
            let session = modern == nil ? stateSession : nil
            let version = modern ?? stateVersion
            let headers: [String]
            do throws(SignInError) {
                headers = requestHeaders(session: isInitialize ? nil : session, version: isInitialize ? nil : version)
                    + (modern == nil ? [] : modernHeaders(message))
                    + ["Content-Type: application/json", "Accept: application/json, text/event-stream"]
                    + Self.lines(try await authorization?.headers(method: "POST", url: URL(string: target)!) ?? [:])
            } catch {
                fail(message, error, starting: isInitialize && !replay)
                return .done
            }
            let result: Exchange
            do throws(SignInError) {
                result = try await exchange("POST", target, headers: headers, body: message.bytes, answering: message.requestID, handOn: !replay,
                                            keepAnswer: message.method == "tools/list", readsVersion: message.method == "initialize")
            } catch {
                if case .canceled = error { return .done }
                fail(message, error, starting: isInitialize && !replay)
                return .done
            }
            let status = result.head.status
            if status == 307 || status == 308 {
                // A redirect that keeps the method and body: followed on the endpoint's own origin (a few hops), the
                // token and headers with it; to another origin, refused with nothing sent there.
                let location = result.head.headers["location"].map { Self.resolve($0.trimmingWhitespace, against: target) }
                guard let location, EndpointURL.problem(location) == nil, EndpointURL.sameOrigin(location, url), hops < 5 else {
                    fail(message, .providerError(endpoint: "MCP server (\(url))", code: "http_\(status)",
                                                 detail: "it redirected to \(location?.withoutControlCharacters ?? "nowhere")\(hops < 5 ? ", which is not on its own origin; nothing was sent there" : " after five redirects")"),
                         starting: isInitialize && !replay)
                    return .done
                }
                hops += 1
                target = location
                continue
            }
            if status == 401 || status == 403, let authorization {
                do throws(SignInError) {
                    let decision = try await authorization.decide(status: status, wwwAuthenticate: result.head.headers["www-authenticate"], afterRetry: authorized)
                    if decision == .retry && !authorized { authorized = true; continue }
                } catch {
                    fail(message, error, starting: isInitialize && !replay)
                    return .done
                }
            }
            let sessionEnded = status == 404 && session != nil && !isInitialize
            if let error = result.errorMessage, !(200..<300).contains(status), status != 401 && status != 403, !sessionEnded {
                // A JSON-RPC error in an error status's body (MCP 2026-07-28: -32022 with the versions the server
                // speaks, -32020 for a header): the client gets it as the server wrote it, for its own request.
                if modern != nil, error.errorCode == -32020, message.method == "tools/call", !relisted {
                    relisted = true
                    if await listToolsAgain(like: message, modern: modern!) { continue }
                }
                if let id = message.requestID, state.withLock({ $0.pending[id] != nil }) {
                    receive(error.answering(id))
                } else if message.requestID == nil {
                    notice("\(message.method ?? "a message") was refused: \(String(decoding: error.bytes.prefix(300), as: UTF8.self).withoutControlCharacters)")
                }
                if isInitialize && !replay {
                    failedToStartOnce(.providerError(endpoint: "MCP server (\(url))", code: "http_\(status)", detail: "it refused the client's initialize"))
                }
                return .done
            }
            if status == 404 && session != nil && !isInitialize {
                guard !renewed else {
                    fail(message, .providerError(endpoint: "MCP server (\(url))", code: "session_ended", detail: "the server ended the session again after a new one started"), starting: false)
                    return .done
                }
                renewed = true
                notice("the MCP server ended the session; starting a new one (the client's initialize sent again)")
                guard await renewSession(after: generation) else {
                    fail(message, .providerError(endpoint: "MCP server (\(url))", code: "session_ended", detail: "the session ended and a new one could not be started"), starting: false)
                    return .done
                }
                continue
            }
            if isInitialize && fallingBack && (400..<500).contains(status) && status != 401 && status != 403 { return .refusedInitialize }
            if status == 200 || status == 202 || status == 204 {
                if isInitialize {
                    // A session id is visible ASCII (0x21 to 0x7E, as the transport says): anything else would be echoed
                    // back as a header of signin's making (a bare CR read as a second header).
                    if let id = result.head.headers["mcp-session-id"], !id.isEmpty, !Self.isVisibleASCII(id) {
                        fail(message, .providerError(endpoint: "MCP server (\(url))", code: "invalid_session_id",
                                                     detail: "its Mcp-Session-Id holds characters other than visible ASCII; the session was not used"), starting: !replay)
                        return .done
                    }
                    state.withLock { s in
                        if let id = result.head.headers["mcp-session-id"], !id.isEmpty { s.sessionID = id }
                        if let v = result.protocolVersion, Self.isVisibleASCII(v) { s.protocolVersion = v }
                    }
                }
                if message.method == "tools/list", let answer = result.answer { learnParameterHeaders(answer) }
                if let id = message.requestID, !result.answered {
                    if let resume = result.lastEventID, modern == nil {
                        await resumeStream(for: message, id: id, from: resume, retry: result.retry)
                    } else if !replay {
                        fail(message, .providerError(endpoint: "MCP server (\(url))", code: "no_answer", detail: "the server ended its answer before the response came"), starting: false)
                    }
                }
                if message.method == "notifications/initialized" && !replay { listen() }
                if modern == nil, state.withLock({ s -> Bool in defer { s.streamPaused = false }; return s.streamPaused }) { listen() }
                return .done
            }
            fail(message, .providerError(endpoint: "MCP server (\(url))", code: "http_\(status)", detail: refusalDetail(status, result.errorText)), starting: isInitialize && !replay)
            return .done
        }
        return .done
    }

    /// A POST stream closed before its answer (allowed since 2025-11-25): read on with GET and `Last-Event-ID`.
    private func resumeStream(for message: JSONRPCMessage, id: JSONRPCMessage.ID, from eventID: String, retry: Int?) async {
        var last = eventID, wait = retry ?? 1000
        for _ in 0..<5 {
            try? await Task.sleep(for: .milliseconds(wait))
            guard !Task.isCancelled else { return }
            let result: Exchange
            do throws(SignInError) {
                guard let opened = try await sessionStream(after: last, answering: id) else { break }
                result = opened
            } catch { continue }
            if result.answered || result.head.status != 200 { if result.answered { return } else { break } }
            if let l = result.lastEventID { last = l }
            wait = result.retry ?? wait
        }
        if !Task.isCancelled {
            fail(message, .providerError(endpoint: "MCP server (\(url))", code: "no_answer", detail: "the server's stream ended before the response came, and resuming it did not bring it"), starting: false)
        }
    }

    /// A new session after a 404: the client's initialize and `initialized` again (their answers not handed on), once
    /// for all the requests that saw the old session end. False when it could not start.
    private func renewSession(after generation: Int) async -> Bool {
        let task: Task<Bool, Never> = state.withLock { s in
            if s.generation != generation { return Task { true } }
            if let t = s.reinitializing { return t }
            let t = Task { () -> Bool in
                let (initialize, initialized) = self.state.withLock { s in
                    s.sessionID = nil
                    s.listening?.cancel()
                    s.listening = nil
                    return (s.initialize, s.initialized)
                }
                guard let initialize else { return false }
                await self.post(initialize, replay: true)
                let started = self.state.withLock { $0.sessionID != nil }
                if let initialized { await self.post(initialized, replay: true) }
                self.state.withLock { s in
                    s.generation += 1
                    s.reinitializing = nil
                }
                if started { self.listen() }
                return started
            }
            s.reinitializing = t
            return t
        }
        return await task.value
    }

    // MARK: The server's own stream

    /// The GET stream for what the server sends of its own accord, kept open for the session (405: the server has
    /// none), reconnected after the server's `retry` with `Last-Event-ID`.
    private func listen() {
        state.withLock { s in
            guard s.listening == nil, !s.closed else { return }
            s.listening = Task { await self.listenLoop() }
        }
    }

    /// Reconnections are bounded: never sooner than half a second (whatever `retry` says), and a stream that ends
    /// within 30 s having carried nothing doubles the wait (up to a minute). A 401 or 403 pauses the stream until the
    /// next request has gone through (its headers are asked without a sign-in: `backgroundHeaders`).
    private func listenLoop() async {
        var last: String?, wait = 1000, failures = 0, quick = 0
        while !Task.isCancelled {
            if state.withLock({ $0.closed }) { return }
            let began = ContinuousClock.now
            let result: Exchange
            do throws(SignInError) {
                guard let opened = try await sessionStream(after: last, answering: nil) else { return }
                result = opened
            } catch {
                if case .canceled = error { return }
                failures += 1
                if failures > 5 { notice("the MCP server's event stream cannot be reached (\(error.description)); going on without it"); return }
                try? await Task.sleep(for: .milliseconds(min(30_000, wait * failures)))
                continue
            }
            let status = result.head.status
            if status == 405 || status == 404 || status == 400 { return }
            if status == 401 || status == 403 {
                // Never a refresh loop or a browser while the client is idle: the stream is opened again after the
                // next request, whose own 401 or 403 is put to the authorization with a person waiting on it.
                notice("the MCP server refused its event stream (HTTP \(status)); it is opened again after the next request")
                state.withLock { s in
                    s.listening = nil
                    s.streamPaused = true
                }
                return
            }
            guard status == 200 else { return }
            failures = 0
            last = result.lastEventID ?? last
            wait = max(500, result.retry ?? wait)
            quick = result.messages == 0 && ContinuousClock.now - began < .seconds(30) ? min(quick + 1, 7) : 0
            try? await Task.sleep(for: .milliseconds(min(60_000, wait << quick)))
        }
    }

    /// The session's GET stream, read on from `lastEventID` when given, its messages handed on; nil when no headers
    /// could be had for it (the sign-in is gone).
    private func sessionStream(after lastEventID: String?, answering: JSONRPCMessage.ID?) async throws(SignInError) -> Exchange? {
        let (session, version) = state.withLock { ($0.sessionID, $0.protocolVersion) }
        guard let auth = try? await authorization?.backgroundHeaders(method: "GET", url: URL(string: url)!) ?? [:] else { return nil }
        var headers = requestHeaders(session: session, version: version) + ["Accept: text/event-stream"] + Self.lines(auth)
        if let lastEventID { headers.append("Last-Event-ID: \(lastEventID)") }
        return try await exchange("GET", url, headers: headers, body: nil, answering: answering, handOn: true)
    }

    // MARK: HTTP+SSE (2024-11-05)

    /// Opens the GET stream and waits for its `endpoint` event (at most the connect timeout and ten seconds).
    private func connectLegacy() async throws(SignInError) {
        try await openLegacyStream()
        // Refused for want of a token (a server that signs in only when asked): put to the authorization, once.
        guard let (status, challenge) = state.withLock({ $0.legacyStreamRefusal }), let authorization else { return }
        guard try await authorization.decide(status: status, wwwAuthenticate: challenge, afterRetry: false) == .retry else {
            throw .providerError(endpoint: "MCP server (\(url))", code: "http_\(status)", detail: refusalDetail(status, nil))
        }
        state.withLock { $0.legacyStreamRefusal = nil }
        try await openLegacyStream()
        if let (status, _) = state.withLock({ $0.legacyStreamRefusal }) {
            throw .providerError(endpoint: "MCP server (\(url))", code: "http_\(status)", detail: refusalDetail(status, nil))
        }
    }

    /// The GET stream of HTTP+SSE, until its `endpoint` event came (or it ended: refused, `legacyStreamRefusal`).
    private func openLegacyStream() async throws(SignInError) {
        let auth = try await authorization?.headers(method: "GET", url: URL(string: url)!) ?? [:]
        let headers = ["Accept: text/event-stream"] + extraHeaders + Self.lines(auth)
        let (streams, url, receive, state, notice) = (self.streams, self.url, self.receive, self.state, self.notice)
        let base = url
        let listening = Task {
            let result = try? await offPool("the MCP server's event stream") { (_) throws(SignInError) -> Int in
                var parser = ServerSentEvents()
                return try streams.exchange(method: "GET", url: url, endpoint: "MCP server (\(url))", headers: headers) { head in
                    if head.status == 401 || head.status == 403 {
                        state.withLock { $0.legacyStreamRefusal = (head.status, head.headers["www-authenticate"]) }
                    }
                    return head.status == 200 ? .more : .enough
                } onData: { bytes in
                    parser.feed(bytes) { event in
                        if event.type == "endpoint" {
                            let resolved = Self.resolve(event.data.trimmingWhitespace, against: base)
                            // Only an endpoint on the stream's own origin (the 2024-11-05 transport's rule for a
                            // client) gets messages, the token and the headers; another is refused, never used.
                            let problem = EndpointURL.problem(resolved)
                                ?? (EndpointURL.sameOrigin(resolved, base) ? nil : "it names \(resolved.withoutControlCharacters), which is not on the origin of \(base.withoutControlCharacters); nothing was sent there")
                            let waiters = state.withLock { s -> [CheckedContinuation<String?, Never>] in
                                guard s.legacyEndpoint == nil, s.legacyRefusal == nil else { return [] }
                                if let problem { s.legacyRefusal = problem } else { s.legacyEndpoint = resolved }
                                defer { s.legacyWaiters = [] }
                                return s.legacyWaiters
                            }
                            for w in waiters { w.resume(returning: problem == nil ? resolved : nil) }
                        } else if event.type == "message" {
                            if let m = JSONRPCMessage(event.bytes) { receive(m) } else { notice(Self.dropped) }
                        }
                    }
                    return .more
                }.head.status
            }
            // The stream ended: whatever is pending will not be answered on it.
            let (waiters, pending, closed, refusedAtOnce) = state.withLock { s in
                defer { s.legacyWaiters = [] }
                return (s.legacyWaiters, Array(s.pending.keys), s.closed, s.legacyStreamRefusal != nil && s.legacyEndpoint == nil)
            }
            for w in waiters { w.resume(returning: nil) }
            // Refused before it began (a sign-in is asked for): the transport signs in and opens it again.
            if !closed && !refusedAtOnce {
                notice("the MCP server's event stream ended (HTTP \(result.map(String.init) ?? "error")); pending requests are answered with an error")
                for id in pending {
                    receive(JSONRPCMessage.error(id: id, code: JSONRPCMessage.transportError, message: "signin: the MCP server at \(url) ended its event stream before answering"))
                }
            }
        }
        state.withLock { $0.listening = listening }
        let endpoint: String? = await withCheckedContinuation { k in
            let known = state.withLock { s -> String?? in
                if s.legacyEndpoint != nil || s.legacyRefusal != nil { return .some(s.legacyEndpoint) }
                s.legacyWaiters.append(k)
                return .none
            }
            if case .some(let e) = known { k.resume(returning: e) }
        }
        if let refusal = state.withLock({ $0.legacyRefusal }) {
            listening.cancel()
            throw .providerError(endpoint: "MCP server (\(url))", code: "invalid_endpoint", detail: "its endpoint event was refused: \(refusal)")
        }
        guard endpoint != nil else {
            if state.withLock({ $0.legacyStreamRefusal != nil }) { return }
            throw .networkUnavailable(endpoint: "MCP server (\(url))", detail: "its event stream ended before naming where to send messages (no endpoint event)")
        }
    }

    private func postLegacy(_ message: JSONRPCMessage) async {
        guard let endpoint = state.withLock({ $0.legacyEndpoint }) else {
            fail(message, .networkUnavailable(endpoint: "MCP server (\(url))", detail: "no HTTP+SSE session"), starting: false)
            return
        }
        var authorized = false
        while !Task.isCancelled {
            let result: Exchange
            do throws(SignInError) {
                let auth = try await authorization?.headers(method: "POST", url: URL(string: endpoint)!) ?? [:]
                let headers = ["Content-Type: application/json"] + extraHeaders + Self.lines(auth)
                result = try await exchange("POST", endpoint, headers: headers, body: message.bytes, answering: nil, handOn: false)
            } catch {
                if case .canceled = error { return }
                fail(message, error, starting: message.method == "initialize")
                return
            }
            let status = result.head.status
            if status == 401 || status == 403, let authorization, !authorized,
               (try? await authorization.decide(status: status, wwwAuthenticate: result.head.headers["www-authenticate"], afterRetry: false)) == .retry {
                authorized = true
                continue
            }
            if !(200..<300).contains(status) {
                fail(message, .providerError(endpoint: "MCP server (\(endpoint))", code: "http_\(status)", detail: refusalDetail(status, result.errorText)), starting: message.method == "initialize")
            }
            return
        }
    }

    // MARK: One exchange

    private struct Exchange: Sendable {
        var head: HTTPStreams.Head
        var answered = false
        /// How many messages came in it.
        var messages = 0
        var lastEventID: String?
        var retry: Int?
        var protocolVersion: String?
        var errorText: String?
        /// A JSON-RPC error response in an error status's body.
        var errorMessage: JSONRPCMessage?
        /// The answer itself, when asked for (`keepAnswer`: a `tools/list`, whose schemas name headers).
        var answer: JSONRPCMessage?
    }

    /// One request, its answer read as it comes: a JSON body or an event stream, each message handed on
    /// (`handOn`) as it arrives; the stream left once the answer to `answering` came. Another status: its body's
    /// first bytes, for the error.
    private func exchange(_ method: String, _ target: String, headers: [String], body: [UInt8]?, answering: JSONRPCMessage.ID?,
                          handOn: Bool, keepAnswer: Bool = false, readsVersion: Bool = false) async throws(SignInError) -> Exchange {
        let (streams, receive, endpoint, notice) = (self.streams, self.receive, "MCP server (\(target))", self.notice)
        return try await offPool("the request to the MCP server", inPlace: true) { (_) throws(SignInError) -> Exchange in
            final class Reading: @unchecked Sendable {
                var stream = false, json: [UInt8] = [], error: [UInt8] = [], status = 0
                var parser = ServerSentEvents()
                var out = Exchange(head: HTTPStreams.Head(status: 0, headers: [:]))
            }
            let r = Reading()
            func take(_ m: JSONRPCMessage) {
                r.out.messages += 1
                if case .response(let id) = m.kind, id == answering {
                    r.out.answered = true
                    if keepAnswer { r.out.answer = m }
                    // Only an initialize's answer names the revision: no other result (a 1 MB one) is parsed here.
                    if readsVersion, let v = m.result?.object?["protocolVersion"]?.string { r.out.protocolVersion = v }
                    // A replayed initialize's answer is the transport's own.
                    if handOn { receive(m) }
                    return
                }
                // Whatever else comes (progress, logs, the server's requests) goes to the client as it comes.
                receive(m)
            }
            let (head, _, _) = try streams.exchange(method: method, url: target, endpoint: endpoint, headers: headers, body: body) { head in
                r.status = head.status
                r.stream = head.headers["content-type"]?.lowercased().hasPrefix("text/event-stream") == true
                return .more
            } onData: { bytes in
                guard r.status == 200 else {
                    // Enough for a JSON-RPC error with its data (-32022's versions), and no more.
                    if r.error.count < 65536 { r.error.append(contentsOf: bytes.prefix(65536 - r.error.count)) }
                    return .more
                }
                if r.stream {
                    var done = false
                    r.parser.feed(bytes) { event in
                        guard event.type == "message", !event.bytes.isEmpty else { return }
                        if let m = JSONRPCMessage(event.bytes) { take(m) } else { notice(Self.dropped) }
                        if r.out.answered { done = true }
                    }
                    r.out.lastEventID = r.parser.lastEventID
                    r.out.retry = r.parser.retryMilliseconds
                    // The answer came: the stream is left, its connection kept if the server ends it at once.
                    return r.parser.tooLarge ? .enough : done ? .finished : .more
                }
                guard r.json.count + bytes.count <= 64 << 20 else { return .enough }
                r.json.append(contentsOf: bytes)
                return .more
            }
            r.out.head = head
            if head.status == 200, !r.stream, !r.json.isEmpty {
                if let m = JSONRPCMessage(r.json) { take(m) } else { notice(Self.dropped) }
            }
            if head.status != 200, !r.error.isEmpty {
                r.out.errorText = String(decoding: r.error.prefix(300), as: UTF8.self).withoutControlCharacters
                if head.status >= 400, let m = JSONRPCMessage(r.error), case .response = m.kind, m.error != nil { r.out.errorMessage = m }
            }
            return r.out
        }
    }

    // MARK: Helpers

    /// What to do after a sign-in that did not finish (timed out in the browser, or denied there): said with the
    /// error, since the client's person never saw the sign-in's progress.
    static func nextStep(_ error: SignInError, _ url: String) -> String {
        switch error {
        case .timedOut, .providerError(_, "access_denied", _):
            return " To sign in, run `signin login --resource \(url.withoutControlCharacters)` in a terminal (the running bridge uses that sign-in at the next request), or restart the MCP server in your client to be asked again."
        default: return ""
        }
    }

    /// What standard error says of a server message that is not a JSON-RPC message: the client never sees it.
    static let dropped = "the MCP server sent something that is not a JSON-RPC message (not JSON, or no method, result or error); dropped"

    /// An error answer for `message` when it is a request (else a notice), and, for the first initialize, why the
    /// transport could not start.
    private func fail(_ message: JSONRPCMessage, _ error: SignInError, starting: Bool) {
        let text = "signin: \(error.description)" + Self.nextStep(error, url)
        if let id = message.requestID, state.withLock({ $0.pending[id] != nil }) {
            receive(JSONRPCMessage.error(id: id, code: JSONRPCMessage.transportError, message: text))
        } else if message.requestID == nil {
            notice("\(message.method ?? "a response") could not be sent: \(error.description)")
        }
        if starting { failedToStartOnce(error) }
    }

    /// Records why the client's first initialize failed and tells `failedToStart`, the first time only.
    private func failedToStartOnce(_ error: SignInError) {
        let first = state.withLock { s -> Bool in
            guard s.startFailure == nil else { return false }
            s.startFailure = error
            return true
        }
        if first { failedToStart(error) }
    }

    /// Visible ASCII (0x21 to 0x7E): what a session id and a protocol version echoed back as headers may hold.
    private static func isVisibleASCII(_ text: String) -> Bool { text.utf8.allSatisfy { (0x21...0x7E).contains($0) } }

    // MARK: MCP 2026-07-28

    /// The headers a request of MCP 2026-07-28 carries besides its revision: `Mcp-Method`, `Mcp-Name` for the methods
    /// that name something, and `Mcp-Param-*` for the arguments its tool's schema marks (`x-mcp-header`).
    private func modernHeaders(_ message: JSONRPCMessage) -> [String] {
        guard let method = message.method else { return [] }
        var h = ["Mcp-Method: " + Self.headerValue(method)]
        let nameKey = ["tools/call": "name", "prompts/get": "name", "resources/read": "uri"][method]
        guard let nameKey, let params = message.params?.object, case .string(let name)? = params[nameKey] else { return h }
        h.append("Mcp-Name: " + Self.headerValue(name))
        guard method == "tools/call", let marked = state.withLock({ $0.parameterHeaders[name] }), let arguments = params["arguments"] else { return h }
        for (path, header) in marked {
            var node: JSONValue? = arguments
            for key in path { node = node?.object?[key] }
            let rendered: String?
            switch node {
            case .string(let v)?: rendered = v
            case .bool(let b)?: rendered = b ? "true" : "false"
            default: rendered = node?.wholeNumber.map { String($0) }
            }
            if let rendered { h.append("Mcp-Param-\(header): " + Self.headerValue(rendered)) }
        }
        return h
    }

    /// A value as a header carries it: visible ASCII as it is, anything else (and a value that looks like the form
    /// itself) as `=?base64?...?=`.
    static func headerValue(_ value: String) -> String {
        let plain = value.utf8.allSatisfy { (0x20...0x7E).contains($0) } && value.first != " " && value.last != " "
            && !(value.hasPrefix("=?base64?") && value.hasSuffix("?="))
        return plain ? value : "=?base64?" + Data(value.utf8).base64EncodedString() + "?="
    }

    /// Notes each tool's `x-mcp-header` arguments from a `tools/list` answer (the properties' chain only, each a valid
    /// header name).
    private func learnParameterHeaders(_ answer: JSONRPCMessage) {
        guard case .array(let tools)? = answer.result?.object?["tools"] else { return }
        var found: [String: [(path: [String], name: String)]] = [:]
        for tool in tools {
            guard let o = tool.object, case .string(let name)? = o["name"] else { continue }
            var marked: [(path: [String], name: String)] = []
            func walk(_ schema: JSONValue?, _ path: [String], depth: Int) {
                guard depth < 16, let properties = schema?.object?["properties"]?.object else { return }
                for (key, sub) in properties {
                    if case .string(let header)? = sub.object?["x-mcp-header"], !header.isEmpty,
                       header.utf8.allSatisfy({ Self.tokenCharacters.contains($0) }) {
                        marked.append((path + [key], header))
                    }
                    walk(sub, path + [key], depth: depth + 1)
                }
            }
            walk(o["inputSchema"], [], depth: 0)
            if !marked.isEmpty { found[name] = marked }
        }
        state.withLock { s in for (k, v) in found { s.parameterHeaders[k] = v } }
    }

    /// RFC 9110's token characters: what a header's name may hold.
    private static let tokenCharacters = Set(Array("!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8))

    /// A `tools/list` of the transport's own (its answer not handed on), with `like`'s revision and `_meta`, for the
    /// headers a `-32020` said were wanted; true when it was answered.
    private func listToolsAgain(like message: JSONRPCMessage, modern: String) async -> Bool {
        let meta = message.rawMeta.map { String(decoding: $0, as: UTF8.self) } ?? "{\"\(JSONRPCMessage.protocolVersionMetaKey)\":\(JSONValueOut.quote(modern))}"
        let n = state.withLock { s -> Int in s.ownRequests += 1; return s.ownRequests }
        let id = JSONRPCMessage.ID(json: JSONValueOut.quote("signin-tools-\(n)"))
        let request = JSONRPCMessage(bytes: Array("{\"jsonrpc\":\"2.0\",\"id\":\(id.json),\"method\":\"tools/list\",\"params\":{\"_meta\":\(meta)}}".utf8),
                                     kind: .request(id: id, method: "tools/list"))
        guard let auth = try? await authorization?.headers(method: "POST", url: URL(string: url)!) ?? [:] else { return false }
        let headers = requestHeaders(session: nil, version: modern) + ["Mcp-Method: tools/list", "Content-Type: application/json",
                                                                        "Accept: application/json, text/event-stream"] + Self.lines(auth)
        guard let listed = try? await exchange("POST", url, headers: headers, body: request.bytes, answering: id, handOn: false, keepAnswer: true),
              let answer = listed.answer else { return false }
        learnParameterHeaders(answer)
        return true
    }

    /// The server's text for an error status, and for a 401 or 403 that a refresh or a sign-in did not mend, what the
    /// person can do about it.
    private func refusalDetail(_ status: Int, _ text: String?) -> String? {
        guard (status == 401 || status == 403), authorization != nil else { return text }
        let hint = "it refused the token signin holds for it even after a refresh or a new sign-in; to sign in again, run `signin login --resource \(url.withoutControlCharacters)` in a terminal"
        return text.map { "\($0) (\(hint))" } ?? hint
    }

    private func requestHeaders(session: String?, version: String?) -> [String] {
        var h = extraHeaders
        if let session { h.append("Mcp-Session-Id: \(session)") }
        if let version { h.append("MCP-Protocol-Version: \(version)") }
        return h
    }

    private static func lines(_ headers: [String: String]) -> [String] { headers.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" } }

    private func cancelledID(_ message: JSONRPCMessage) -> JSONRPCMessage.ID? {
        switch message.member("params")?.object?["requestId"] {
        case .string(let s)?: return JSONRPCMessage.ID(json: JSONValueOut.quote(s))
        case .number(let n)? where n.rounded() == n: return JSONRPCMessage.ID(json: String(Int(n)))
        default: return nil
        }
    }

    /// Returns once nothing is pending, or when the calling task is cancelled.
    private func drained() async {
        let number = state.withLock { s -> Int in
            defer { s.nextWaiter += 1 }
            return s.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (k: CheckedContinuation<Void, Never>) in
                let done = state.withLock { s -> Bool in
                    if s.idle || Task.isCancelled { return true }
                    s.drained[number] = k
                    return false
                }
                if done { k.resume() }
            }
        } onCancel: {
            state.withLock { $0.drained.removeValue(forKey: number) }?.resume()
        }
    }

    private func releaseDrainedIfEmpty() {
        let waiters = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            guard s.idle else { return [] }
            defer { s.drained = [:] }
            return Array(s.drained.values)
        }
        for w in waiters { w.resume() }
    }

    /// `reference` (an `endpoint` event's address: absolute, or a path) resolved against the stream's URL.
    static func resolve(_ reference: String, against base: String) -> String {
        if reference.hasPrefix("http://") || reference.hasPrefix("https://") { return reference }
        guard let origin = EndpointURL.origin(of: base) else { return reference }
        if reference.hasPrefix("/") { return origin + reference }
        let path = base.dropFirst(origin.count).split(separator: "?", maxSplits: 1).first.map(String.init) ?? "/"
        let folder = path.hasSuffix("/") ? path : String(path[...(path.lastIndex(of: "/") ?? path.startIndex)])
        return origin + (folder.isEmpty ? "/" : folder) + reference
    }
}
