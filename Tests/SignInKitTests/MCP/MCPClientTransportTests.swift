import Foundation
import Synchronization
import Testing
@testable import SignInMCP
import SignInKit
import SignInBase

#if canImport(Glibc)
import Glibc
#endif

/// `MCPClientTransport` beside itself: each branch of its doc comment's tree against a scripted HTTP stand-in in this
/// process (a socket on 127.0.0.1, port 0), no signin process and no MCP server.
@Suite struct MCPClientTransportTests {
    /// One request as the stand-in read it.
    struct Request: Sendable {
        var method: String
        /// The request's target as sent (`/mcp`, `/messages?session=abc`).
        var path = ""
        var headers: [String: String]
        var body: String
        var rpcMethod: String? { (try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])?["method"] as? String }
        var rpcID: Int? { (try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])?["id"] as? Int }
    }

    /// What the stand-in answers.
    enum Reply: Sendable {
        case status(Int, headers: [String: String] = [:], body: String = "")
        case json(String, headers: [String: String] = [:])
        /// An event stream of these events (each `id`, `data`), then the connection closes.
        case events([(id: String?, data: String)], headers: [String: String] = [:])
        /// Nothing, ever (until the test ends).
        case hang
        /// The connection closed without an answer.
        case drop
        /// An event stream left open: `feed`'s first events at once, then whatever the test sends through it, until
        /// the client goes.
        case stream(Feed)
    }

    /// An open event stream's other end: the test writes events into every connection that has the stream open.
    final class Feed: Sendable {
        private let connections = Mutex<[Int32]>([])
        let first: [(event: String?, data: String)]

        init(first: [(event: String?, data: String)] = []) { self.first = first }

        /// One server-sent event as the stand-in writes it, open stream or not.
        static func text(id: String? = nil, _ event: String?, _ data: String) -> String {
            (id.map { "id: \($0)\n" } ?? "") + (event.map { "event: \($0)\n" } ?? "") + "data: \(data)\n\n"
        }

        fileprivate func opened(_ c: Int32) { connections.withLock { $0.append(c) } }
        fileprivate func closed(_ c: Int32) { connections.withLock { $0.removeAll { $0 == c } } }

        /// One event to every open stream.
        func send(event: String? = nil, _ data: String) {
            let text = Self.text(event, data)
            connections.withLock { for c in $0 { FileIO.writeAll(c, text) } }
        }
    }

    /// The scripted server: `script` answers each request, on its own thread.
    final class StandIn: @unchecked Sendable {
        let port: Int
        private let fd: Int32
        let requests = Mutex<[Request]>([])
        private let script: @Sendable (Request, Int) -> Reply

        init(_ script: @escaping @Sendable (Request, Int) -> Reply) throws {
            self.script = script
            let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var yes: Int32 = 1
            setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
            var addr = sockaddr_in()
            addr.sin_family = sa_family_t(AF_INET)
            addr.sin_addr.s_addr = inet_addr("127.0.0.1")
            addr.sin_port = 0
            _ = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
            listen(listener, 16)
            var len = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &len) } }
            fd = listener
            port = Int(UInt16(bigEndian: addr.sin_port))
            let server = self
            Thread.detachNewThread { server.accepting() }
        }

        var url: String { "http://127.0.0.1:\(port)/mcp" }

        func stop() { shutdown(fd, Int32(SHUT_RDWR)); close(fd) }

        private func accepting() {
            while true {
                let c = accept(fd, nil, nil)
                if c < 0 { return }
                let server = self
                Thread.detachNewThread { server.serve(c) }
            }
        }

        private func serve(_ c: Int32) {
            var buffer = [UInt8]()
            defer { close(c) }
            while true {
                // The head, then the body by Content-Length.
                var headEnd: Int?
                while headEnd == nil {
                    if let r = buffer.firstRange(of: Array("\r\n\r\n".utf8)) { headEnd = r.upperBound; break }
                    var chunk = [UInt8](repeating: 0, count: 65536)
                    let n = Posix.read(c, &chunk, chunk.count)
                    if n <= 0 { return }
                    buffer += chunk[0..<n]
                }
                let head = String(decoding: buffer[..<headEnd!], as: UTF8.self).split(separator: "\r\n").map(String.init)
                var headers: [String: String] = [:]
                for line in head.dropFirst() {
                    if let colon = line.firstIndex(of: ":") { headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces) }
                }
                let length = Int(headers["content-length"] ?? "0") ?? 0
                while buffer.count < headEnd! + length {
                    var chunk = [UInt8](repeating: 0, count: 65536)
                    let n = Posix.read(c, &chunk, chunk.count)
                    if n <= 0 { return }
                    buffer += chunk[0..<n]
                }
                let body = String(decoding: buffer[headEnd!..<(headEnd! + length)], as: UTF8.self)
                buffer.removeFirst(headEnd! + length)
                let line = head[0].split(separator: " ")
                let request = Request(method: String(line[0]), path: line.count > 1 ? String(line[1]) : "", headers: headers, body: body)
                let index = requests.withLock { r in r.append(request); return r.count - 1 }
                switch script(request, index) {
                case .status(let code, let extra, let text):
                    write(c, code, extra.merging(["Content-Type": "application/json"]) { a, _ in a }, text)
                case .json(let text, let extra):
                    write(c, 200, extra.merging(["Content-Type": "application/json"]) { a, _ in a }, text)
                case .events(let events, let extra):
                    var text = ""
                    for e in events { text += Feed.text(id: e.id, nil, e.data) }
                    write(c, 200, extra.merging(["Content-Type": "text/event-stream", "Connection": "close"]) { a, _ in a }, text)
                    return
                case .hang:
                    var b: UInt8 = 0
                    while Posix.read(c, &b, 1) > 0 {}
                    return
                case .drop:
                    return
                case .stream(let feed):
                    var text = "HTTP/1.1 200 X\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"
                    for e in feed.first { text += Feed.text(e.event, e.data) }
                    FileIO.writeAll(c, text)
                    feed.opened(c)
                    defer { feed.closed(c) }
                    var b: UInt8 = 0
                    while Posix.read(c, &b, 1) > 0 {}
                    return
                }
            }
        }

        private func write(_ c: Int32, _ code: Int, _ headers: [String: String], _ body: String) {
            var text = "HTTP/1.1 \(code) X\r\nContent-Length: \(body.utf8.count)\r\n"
            for (k, v) in headers { text += "\(k): \(v)\r\n" }
            text += "\r\n" + body
            FileIO.writeAll(c, text)
        }
    }

    /// An OAuth layer that hands out `token-N` and says `.retry` to a 401 or 403 once (a refresh, a step-up).
    final class Authorization: MCPAuthorization, @unchecked Sendable {
        let asked = Mutex(0)
        let decisions = Mutex<[Int]>([])
        func headers(method: String, url: URL) async throws(SignInError) -> [String: String] {
            ["Authorization": "Bearer token-\(asked.withLock { $0 += 1; return $0 })"]
        }
        func decide(status: Int, wwwAuthenticate: String?, afterRetry: Bool) async throws(SignInError) -> AuthorizationDecision {
            decisions.withLock { $0.append(status) }
            return afterRetry ? .done : .retry
        }
    }

    /// What `receive` got, awaited without sleeping and without blocking a thread of the cooperative pool (the
    /// transport's own tasks run there): each waiter is resumed by the message that satisfies it.
    final class Received: @unchecked Sendable {
        private struct Waiter {
            let done: ([JSONRPCMessage]) -> Bool
            let continuation: CheckedContinuation<Void, Never>
        }
        private let lock = NSLock()
        private var messages: [JSONRPCMessage] = []
        private var waiters: [Waiter] = []
        private func locked<T>(_ body: (Received) -> T) -> T { lock.lock(); defer { lock.unlock() }; return body(self) }

        func add(_ m: JSONRPCMessage) {
            let ready = locked { s -> [Waiter] in
                s.messages.append(m)
                let (now, later) = (s.waiters.filter { $0.done(s.messages) }, s.waiters.filter { !$0.done(s.messages) })
                s.waiters = later
                return now
            }
            ready.forEach { $0.continuation.resume() }
        }

        var all: [JSONRPCMessage] { locked { $0.messages } }

        /// The messages once `done` holds of them; after 20 s (a watchdog, far beyond any answer here), as they are.
        func wait(until done: @escaping @Sendable ([JSONRPCMessage]) -> Bool) async -> [JSONRPCMessage] {
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    await withCheckedContinuation { (k: CheckedContinuation<Void, Never>) in
                        let now = self.locked { s -> Bool in
                            if done(s.messages) { return true }
                            s.waiters.append(Waiter(done: done, continuation: k))
                            return false
                        }
                        if now { k.resume() }
                    }
                }
                group.addTask { await MCPClientTransportTests.watchdog(seconds: 20) }
                await group.next()
                group.cancelAll()
                // A waiter the watchdog outlived is resumed so the group can end.
                let stale = self.locked { s -> [Waiter] in defer { s.waiters = [] }; return s.waiters }
                stale.forEach { $0.continuation.resume() }
            }
            return all
        }

        func answer(_ id: Int) async -> JSONRPCMessage? {
            let key = JSONRPCMessage.Kind.response(id: .init(json: String(id)))
            return await wait { $0.contains { $0.kind == key } }.first { $0.kind == key }
        }
    }

    /// A watchdog's wait: `seconds` counted in tenths, each a wake-up of its own. The whole suite shares two pool
    /// threads with tests that block theirs for seconds; a single long sleep would end "in time" after such a stall
    /// while the awaited work, stalled as long, had not been run yet. Counted in wake-ups, it stalls with that work.
    static func watchdog(seconds: Int) async {
        for _ in 0..<(seconds * 10) where !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(100))
        }
    }

    static func message(_ text: String) -> JSONRPCMessage { JSONRPCMessage(Array(text.utf8), checked: true)! }
    static let initialize = message(#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#)
    static let initialized = message(#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
    static func call(_ id: Int) -> JSONRPCMessage { message(#"{"jsonrpc":"2.0","id":\#(id),"method":"tools/call","params":{"name":"add","arguments":{}}}"#) }
    static func result(_ id: Int, _ text: String = "ok") -> String { #"{"jsonrpc":"2.0","id":\#(id),"result":{"text":"\#(text)"}}"# }
    static let initializeResult = #"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}"#

    /// A server of the handshake era: the initialize answered with session `s1`, notifications 202, the GET stream
    /// refused (405), DELETE 200; everything else by `calls`.
    static func server(_ calls: @escaping @Sendable (Request, Int) -> Reply) throws -> StandIn {
        try StandIn { request, index in
            if request.method == "GET" { return .status(405) }
            if request.method == "DELETE" { return .status(200) }
            if request.rpcMethod == "initialize" { return .json(initializeResult, headers: ["Mcp-Session-Id": "s1"]) }
            if request.rpcID == nil { return .status(202) }
            return calls(request, index)
        }
    }

    static func transport(_ s: StandIn, _ received: Received, authorization: (any MCPAuthorization)? = nil) -> MCPClientTransport {
        MCPClientTransport(url: s.url, kind: .streamableHTTP, authorization: authorization, receive: { received.add($0) })
    }

    /// A JSON answer; the session id and the protocol version on every request after the initialize; DELETE at close.
    @Test func aJSONAnswerAndTheSessionOnEveryLaterRequest() async throws {
        let s = try Self.server { request, _ in .json(Self.result(request.rpcID ?? -1)) }
        defer { s.stop() }
        let received = Received()
        let t = Self.transport(s, received)
        t.send(Self.initialize)
        t.send(Self.initialized)
        t.send(Self.call(1))
        #expect(await received.answer(1) != nil, "\(s.requests.withLock { $0 }.map { ($0.method, $0.body) }) \(received.all.map(\.text))")
        await t.close()
        let requests = s.requests.withLock { $0 }
        #expect(requests.dropFirst().allSatisfy { $0.headers["mcp-session-id"] == "s1" && $0.headers["mcp-protocol-version"] == "2025-11-25" }, "\(requests.map(\.headers))")
        #expect(requests.contains { $0.method == "DELETE" })
    }

    /// MCP 2026-07-28, per message (its `_meta` names the revision): no initialize made or waited for, no session, no
    /// GET stream; the POST carries the revision and the method and name headers from the message itself; a 4xx whose
    /// body is a JSON-RPC error reaches the client unchanged (code, message, data), never as an HTTP error of the
    /// transport's making and never a fall back to HTTP+SSE.
    @Test func a2026MessageGoesAloneWithItsHeadersAndItsErrorBodyPassesUnchanged() async throws {
        let s = try StandIn { request, _ in
            if request.rpcID == 2 {
                return .status(400, body: #"{"jsonrpc":"2.0","id":2,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"]}}}"#)
            }
            return .json(Self.result(request.rpcID ?? -1))
        }
        defer { s.stop() }
        let received = Received()
        let t = MCPClientTransport(url: s.url, kind: .auto, authorization: nil, receive: { received.add($0) })
        let meta = #""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#
        t.send(Self.message(#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{},\#(meta)}}"#))
        #expect(await received.answer(1)?.result != nil)
        t.send(Self.message(#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{\#(meta)}}"#))
        let refused = await received.answer(2)
        let error = refused?.error?.object
        #expect(error?["code"]?.int == -32022 && error?["data"]?.object?["supported"] != nil, "\(refused?.text ?? "none")")
        await t.close()
        let requests = s.requests.withLock { $0 }
        #expect(requests.map(\.method) == ["POST", "POST"], "nothing but the two messages: \(requests.map { ($0.method, $0.body) })")
        #expect(requests[0].headers["mcp-protocol-version"] == "2026-07-28" && requests[0].headers["mcp-method"] == "tools/call" && requests[0].headers["mcp-name"] == "add")
        #expect(requests.allSatisfy { $0.headers["mcp-session-id"] == nil })
    }

    /// An event stream: a progress notification, then the answer, handed on in that order.
    @Test func anEventStreamsMessagesComeInOrder() async throws {
        let s = try Self.server { request, _ in
            .events([(nil, #"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}"#), (nil, Self.result(request.rpcID!))])
        }
        defer { s.stop() }
        let received = Received()
        let t = Self.transport(s, received)
        t.send(Self.initialize)
        t.send(Self.call(1))
        let all = await received.wait { $0.contains { $0.kind == .response(id: .init(json: "1")) } }
        let progress = all.firstIndex { $0.method == "notifications/progress" }, answer = all.firstIndex { $0.kind == .response(id: .init(json: "1")) }
        #expect(progress != nil && answer != nil && progress! < answer!)
        await t.close()
    }

    /// A 401, then the request again with new headers (the authorization said retry); a 403 step-up the same way.
    @Test func aRefusalIsPutToTheAuthorizationAndTheRequestSentAgainOnce() async throws {
        let s = try Self.server { request, _ in
            switch request.headers["authorization"] {
            case "Bearer token-2": return .status(401, headers: ["WWW-Authenticate": #"Bearer error="invalid_token""#])
            case "Bearer token-4": return .status(403, headers: ["WWW-Authenticate": #"Bearer error="insufficient_scope", scope="admin""#])
            default: return .json(Self.result(request.rpcID!))
            }
        }
        defer { s.stop() }
        let received = Received()
        let auth = Authorization()
        let t = Self.transport(s, received, authorization: auth)
        t.send(Self.initialize)
        _ = await received.wait { !$0.isEmpty }
        t.send(Self.call(1))
        #expect(await received.answer(1)?.result != nil)
        t.send(Self.call(2))
        #expect(await received.answer(2)?.result != nil)
        #expect(auth.decisions.withLock { $0 } == [401, 403])
        await t.close()
    }

    /// A 404 for the session: the client's initialize and `initialized` again (their answers kept), then the request.
    @Test func anEndedSessionStartsAgainAndTheRequestGoesOnce() async throws {
        let ended = Mutex(false)
        let s = try Self.server { request, _ in
            if request.rpcID == 1, ended.withLock({ e in defer { e = true }; return !e }) { return .status(404) }
            return .json(Self.result(request.rpcID!))
        }
        defer { s.stop() }
        let received = Received()
        let t = Self.transport(s, received)
        t.send(Self.initialize)
        t.send(Self.initialized)
        t.send(Self.call(1))
        #expect(await received.answer(1)?.result != nil)
        let all = received.all
        #expect(all.filter { $0.kind == .response(id: .init(json: "0")) }.count == 1, "the replayed initialize's answer is the transport's own")
        #expect(s.requests.withLock { $0 }.filter { $0.rpcMethod == "initialize" }.count == 2)
        await t.close()
    }

    /// A POST stream closed after an event id, before its answer: resumed with GET and `Last-Event-ID`.
    @Test func aStreamClosedBeforeItsAnswerIsResumedWithLastEventID() async throws {
        let s = try StandIn { request, _ in
            if request.method == "GET" {
                return request.headers["last-event-id"] == "e1" ? .events([("e2", Self.result(1, "resumed"))]) : .status(405)
            }
            if request.method == "DELETE" { return .status(200) }
            if request.rpcMethod == "initialize" { return .json(Self.initializeResult, headers: ["Mcp-Session-Id": "s1"]) }
            if request.rpcID == nil { return .status(202) }
            return .events([("e1", #"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"working"}}"#)], headers: [:])
        }
        defer { s.stop() }
        let received = Received()
        let t = Self.transport(s, received)
        t.send(Self.initialize)
        t.send(Self.call(1))
        #expect(await received.answer(1)?.result?.object?["text"]?.string == "resumed")
        await t.close()
    }

    /// A request the client cancels: its POST ends, and no answer is handed on for it (nor an error); a server gone
    /// mid-call: an error answer saying so.
    @Test func aCancelledRequestGetsNoAnswerAndAServerGoneMidCallIsAnError() async throws {
        let s = try Self.server { request, _ in request.rpcID == 1 ? .hang : .drop }
        defer { s.stop() }
        let received = Received()
        let t = Self.transport(s, received)
        t.send(Self.initialize)
        t.send(Self.call(1))
        t.send(Self.message(#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#))
        t.send(Self.call(2))
        let gone = await received.answer(2)
        #expect(gone?.errorCode == JSONRPCMessage.transportError, "\(gone?.text ?? "none")")
        await t.close()
        #expect(!received.all.contains { $0.kind == .response(id: .init(json: "1")) }, "nothing for the cancelled request")
    }

    /// After `notifications/initialized`, the GET stream carries what the server sends of its own accord: a
    /// notification on it reaches the client.
    @Test func theServersOwnStreamReachesTheClient() async throws {
        let feed = Feed(first: [(nil, #"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#)])
        let s = try StandIn { request, _ in
            if request.method == "GET" { return .stream(feed) }
            if request.method == "DELETE" { return .status(200) }
            if request.rpcMethod == "initialize" { return .json(Self.initializeResult, headers: ["Mcp-Session-Id": "s1"]) }
            return .status(202)
        }
        defer { s.stop() }
        let received = Received()
        let t = Self.transport(s, received)
        t.send(Self.initialize)
        t.send(Self.initialized)
        let all = await received.wait { $0.contains { $0.method == "notifications/tools/list_changed" } }
        #expect(all.contains { $0.method == "notifications/tools/list_changed" }, "\(all.map(\.text))")
        let get = s.requests.withLock { $0 }.first { $0.method == "GET" }
        #expect(get?.headers["mcp-session-id"] == "s1" && get?.headers["accept"]?.contains("text/event-stream") == true)
        await t.close()
    }

    /// HTTP+SSE (2024-11-05) under `.auto`: the initialize POST refused with a 4xx, the GET stream opened, its
    /// `endpoint` event followed (on the stream's own origin), each message POSTed there and its answer taken from the
    /// stream.
    @Test func aRefusedInitializeFallsBackToHTTPPlusSSE() async throws {
        let feed = Feed(first: [("endpoint", "/messages?session=abc")])
        let s = try StandIn { request, _ in
            if request.method == "GET" { return .stream(feed) }
            if request.method == "POST", request.headers["accept"]?.contains("text/event-stream") == true { return .status(405) }
            // A 2024-11-05 server: 202 for the POST, the answer on the stream.
            if let id = request.rpcID { feed.send(event: "message", id == 0 ? Self.initializeResult : Self.result(id)) }
            return .status(202)
        }
        defer { s.stop() }
        let received = Received()
        let t = MCPClientTransport(url: s.url, kind: .auto, authorization: nil, receive: { received.add($0) })
        t.send(Self.initialize)
        #expect(await received.answer(0)?.result != nil)
        t.send(Self.initialized)
        t.send(Self.call(1))
        #expect(await received.answer(1)?.result?.object?["text"]?.string == "ok")
        await t.close()
        let posts = s.requests.withLock { $0 }.filter { $0.method == "POST" }
        // The first POST to the endpoint as configured (streamable HTTP, refused), every later one to the stream's
        // endpoint: the initialize again, then the call.
        #expect(posts.first?.path == "/mcp" && posts.first?.rpcMethod == "initialize", "\(posts.map { ($0.path, $0.body) })")
        #expect(posts.dropFirst().allSatisfy { $0.path == "/messages?session=abc" && $0.headers["accept"]?.contains("text/event-stream") != true },
                "\(posts.map { ($0.path, $0.body) })")
        #expect(posts.dropFirst().contains { $0.rpcMethod == "initialize" } && posts.contains { $0.rpcID == 1 })
    }

    /// An HTTP error for a call: an error answer for that call's id naming the status; the next call is answered.
    @Test func anHTTPErrorIsAnErrorAnswerAndTheNextCallGoesOn() async throws {
        let s = try Self.server { request, _ in request.rpcID == 1 ? .status(500, body: "boom") : .json(Self.result(request.rpcID!)) }
        defer { s.stop() }
        let received = Received()
        let t = Self.transport(s, received)
        t.send(Self.initialize)
        t.send(Self.call(1))
        let failed = await received.answer(1)
        #expect(failed?.errorCode == JSONRPCMessage.transportError && failed?.text.contains("500") == true, "\(failed?.text ?? "none")")
        t.send(Self.call(2))
        #expect(await received.answer(2)?.result != nil)
        await t.close()
    }

    /// `close(waitingUpTo:ending:)` returns within its bounds with a request pending forever.
    @Test func closeHonoursItsBound() async throws {
        let s = try Self.server { _, _ in .hang }
        defer { s.stop() }
        let received = Received()
        let t = Self.transport(s, received)
        t.send(Self.initialize)
        t.send(Self.call(1))
        // Before the fix, `close` never returned with a request pending: the watchdog (far beyond the bounds) says so.
        let returned = await withTaskGroup(of: Bool.self) { group in
            group.addTask { await t.close(waitingUpTo: .milliseconds(200), ending: .milliseconds(200)); return true }
            group.addTask { await Self.watchdog(seconds: 30); return false }
            defer { group.cancelAll() }
            return await group.next() ?? false
        }
        #expect(returned, "close did not return with a request pending")
    }
}
