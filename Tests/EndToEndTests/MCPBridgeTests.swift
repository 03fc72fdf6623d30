import Foundation
import Testing

/// `signin mcp URL`, the stdio bridge, with the MCP Python SDK on both ends: its stdio client launches signin as
/// Claude Desktop would (Tests/Providers/mcp_stdio_client.py), and its server (Tests/Providers/mcp_server.py: the
/// SDK's authorization-server routes and `MCPServer` with `AuthSettings`, on streamable HTTP or HTTP+SSE) answers.
/// Raw lines on standard input drive what the SDK's client never sends (string ids, bad lines, several requests at
/// once).
@Suite struct MCPBridgeTests {
    /// The SDK's stdio client running `scenario` through `signin mcp URL ARGS...`: its result line as JSON.
    static func client(_ box: Sandbox, _ scenario: String, _ url: String, _ args: [String] = [], env extra: [String: String] = [:]) throws -> (RunResult, [String: Any]) {
        var env = box.environment
        env.merge(extra) { $1 }
        let r = try Subprocess.run(Paths.python, [Paths.providers.appendingPathComponent("mcp_stdio_client.py").path, scenario, Paths.signin, "mcp", url] + args,
                                   env: env.filter { !$0.value.isEmpty })
        let line = r.stdout.split(separator: "\n").last.map(String.init) ?? ""
        return (r, TokensForEveryAPITests.json(line))
    }

    /// JSON-RPC lines for standard input: the client's initialize and `initialized`, then `more`.
    static func lines(_ more: [String], version: String = "2025-06-18") -> Data {
        let initialize = #"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"\#(version)","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#
        return Data(([initialize, #"{"jsonrpc":"2.0","method":"notifications/initialized"}"#] + more).map { $0 + "\n" }.joined().utf8)
    }

    static func call(_ id: String, _ tool: String, _ arguments: String) -> String {
        #"{"jsonrpc":"2.0","id":\#(id),"method":"tools/call","params":{"name":"\#(tool)","arguments":\#(arguments)}}"#
    }

    /// Each line of `stdout` as a JSON object (a line that is not one fails the test: stdout is for messages only).
    static func messages(_ stdout: String) -> [[String: Any]] {
        stdout.split(separator: "\n").map { line in
            let o = TokensForEveryAPITests.json(String(line))
            #expect(o["jsonrpc"] as? String == "2.0", "not a JSON-RPC message on standard output: \(line)")
            return o
        }
    }

    static func browserLaunches(_ box: Sandbox) -> Int { box.standinSteps().filter { $0["step"] as? String == "fds" }.count }

    /// The first run signs in (one browser launch) and the client's session works; the second run restores the sign-in
    /// with no browser; `signin token --resource URL` sees the same sign-in; the token is in no file in clear and not
    /// on standard error; every request after the initialize carries the session id and the protocol version; the
    /// session ends with DELETE when the client goes.
    @Test func theFirstRunSignsInOnceAndTheNextRestores() throws {
        let p = try Provider(script: "mcp_server.py", arguments: ["--require-resource"])
        defer { p.stop() }
        let url = try #require(p.readyWords.first)
        let box = try MCPServerTests.machine(p)
        let (first, answer) = try Self.client(box, "basic", url)
        #expect(first.status == 0 && answer["sum"] as? String == "5", "\(first.stdout) \(first.stderr)")
        #expect((answer["tools"] as? [String])?.contains("add") == true, "\(answer)")
        #expect(Self.browserLaunches(box) == 1, "one sign-in: \(box.standinSteps())")
        let (second, again) = try Self.client(box, "basic", url, env: ["BROWSER": "/bin/false"])
        #expect(second.status == 0 && again["sum"] as? String == "5", "no browser the second time: \(second.stdout) \(second.stderr)")
        #expect(Self.browserLaunches(box) == 1)
        let token = try box.signin("token", "--resource", url).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(!token.isEmpty)
        #expect(!first.stderr.contains(token) && !second.stderr.contains(token), "no token on standard error")
        for case let file as String in FileManager.default.enumerator(atPath: box.root.path)?.allObjects ?? [] {
            let data = (try? Data(contentsOf: box.root.appendingPathComponent(file))) ?? Data()
            #expect(!data.contains(token), "the token in clear in \(file)")
        }
        let requests = (try MCPServerTests.stats(p)["mcp_requests"] as? [[String: Any]]) ?? []
        let afterInitialize = requests.filter { $0["session"] is String }
        #expect(afterInitialize.count >= 4, "\(requests)")
        #expect(afterInitialize.allSatisfy { $0["version"] as? String == again["version"] as? String }, "MCP-Protocol-Version on every request: \(requests)")
        #expect(requests.filter { $0["method"] as? String == "DELETE" }.count == 2, "each session ended with DELETE: \(requests)")
        #expect(requests.filter { $0["method"] as? String == "POST" }.allSatisfy { $0["accept"] as? String == "application/json, text/event-stream" })
    }

    /// On a machine reached with `signin ssh --resource URL` from a laptop that signs in only to MCP servers (no
    /// configuration file there), the MCP client launches `signin mcp URL`, which asks the agent forwarded from the
    /// laptop for the server's token: the session works, with no browser and no grant on the remote side. (The laptop's
    /// agent refused to open such a session, asking for a configuration it had no use for.)
    @Test func overSSHTheBridgeTakesTheServersTokenFromTheForwardedAgent() throws {
        let p = try Provider(script: "mcp_server.py", arguments: ["--require-resource"])
        defer { p.stop() }
        let url = try #require(p.readyWords.first)
        let box = try MCPServerTests.machine(p)
        box.environment["XDG_RUNTIME_DIR"] = try box.shortFolder()
        box.environment["XDG_STATE_HOME"] = box.root.appendingPathComponent("state").path
        #expect(try box.signin("login", "--resource", url, "--timeout", "30").status == 0)
        let launches = Self.browserLaunches(box)
        let remote = try RemoteMachine(box)
        let client = [Paths.python, Paths.providers.appendingPathComponent("mcp_stdio_client.py").path, "basic", Paths.signin, "mcp", url].joined(separator: " ")
        let r = try box.signin(["ssh", "--resource", url] + remote.sshArguments + ["signin token --resource \(url) >/dev/null; echo token=$?; BROWSER=/bin/false \(client)"])
        let answer = TokensForEveryAPITests.json(r.stdout.split(separator: "\n").last.map(String.init) ?? "")
        #expect(r.status == 0 && answer["sum"] as? String == "5", "\(r.stdout) \(r.stderr)")
        #expect(r.stdout.contains("token=0\n"), "`signin token --resource URL` there too: \(r.stdout)")
        #expect(Self.browserLaunches(box) == launches, "no sign-in on either side")
        let token = try box.signin("token", "--resource", url).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(!token.isEmpty && !r.stdout.contains(token) && !r.stderr.contains(token))
    }

    /// Progress notifications reach the client in order before the answer; the server's request on a call's stream
    /// (sampling) is answered back; on the session's own stream (GET), a log message and a sampling request arrive
    /// and the client's answer reaches the server; a 1 MB result and 200 calls in a row come whole.
    @Test func streamsProgressServerRequestsBigResultsAndManyCalls() throws {
        let p = try Provider(script: "mcp_server.py")
        defer { p.stop() }
        let url = try #require(p.readyWords.first)
        let box = try MCPServerTests.machine(p)
        let (progress, steps) = try Self.client(box, "progress", url)
        #expect(progress.status == 0 && steps["progress"] as? [Double] == [1, 2, 3, 4, 5] && steps["result"] as? String == "5 steps", "\(progress.stdout) \(progress.stderr)")
        let (sampling, sampled) = try Self.client(box, "sampling", url)
        #expect(sampling.status == 0 && sampled["asked"] as? String == "sampled: hi", "\(sampling.stdout) \(sampling.stderr)")
        #expect(sampled["log"] as? String == "from the background", "the log message on the GET stream: \(sampled)")
        #expect(waitFor { ((try? MCPServerTests.stats(p)["background"]) as? [String])?.contains("sampled: background") == true },
                "the client's answer to the server's own request reached it: \((try? MCPServerTests.stats(p)) ?? [:])")
        let (big, length) = try Self.client(box, "big", url)
        #expect(big.status == 0 && length["length"] as? Int == 1 << 20, "\(big.stderr)")
        let (many, counted) = try Self.client(box, "many", url)
        #expect(many.status == 0 && counted["calls"] as? Int == 200 && counted["wrong"] as? Int == 0, "\(many.stdout) \(many.stderr)")
    }

    /// Raw lines: string and integer ids kept; three calls in flight answered in the order the server answers them;
    /// a line that is not JSON gets a parse error (id null), JSON that is no message with an id an invalid request,
    /// and the bridge goes on; standard output holds only JSON-RPC; input closed: the pending answers come, the
    /// session is ended, exit 0.
    @Test func rawLinesKeepTheirIdsAndAnswersComeAsTheServerGivesThem() throws {
        let p = try Provider(script: "mcp_server.py")
        defer { p.stop() }
        let url = try #require(p.readyWords.first)
        let box = try MCPServerTests.machine(p)
        let input = Self.lines([Self.call(#""slow-300""#, "slow", #"{"ms":300}"#), Self.call("7", "slow", #"{"ms":150}"#), Self.call(#""fast""#, "slow", #"{"ms":0}"#),
                                "this is not JSON", #"{"id":99,"hello":1}"#, Self.call(#""after""#, "add", #"{"a":1,"b":2}"#)])
        let r = try box.signin(["mcp", url], stdin: input)
        #expect(r.status == 0, "\(r.stdout) \(r.stderr)")
        let out = Self.messages(r.stdout)
        let ids = out.compactMap { m -> String? in
            if let s = m["id"] as? String { return s }
            if let n = m["id"] as? Int { return String(n) }
            return m.keys.contains("id") ? "null" : nil
        }
        #expect(ids.first == "null" || ids.contains("null"), "the bad line's parse error: \(r.stdout)")
        #expect(out.contains { ($0["error"] as? [String: Any])?["code"] as? Int == -32700 }, "\(r.stdout)")
        #expect(out.contains { $0["id"] as? Int == 99 && ($0["error"] as? [String: Any])?["code"] as? Int == -32600 }, "\(r.stdout)")
        let calls = ids.filter { ["slow-300", "7", "fast"].contains($0) }
        #expect(calls == ["fast", "7", "slow-300"], "answered as the server answered: \(ids)")
        #expect(ids.contains("after") && ids.contains("0"), "\(ids)")
        let requests = (try MCPServerTests.stats(p)["mcp_requests"] as? [[String: Any]]) ?? []
        #expect(requests.last?["method"] as? String == "DELETE", "the session ended: \(requests)")
    }

    /// A server that fails one call (HTTP 500): the client gets a JSON-RPC error for that call's id, saying what the
    /// server answered, and the bridge goes on (the next call is answered, the session ends as usual, exit 0).
    @Test func aCallTheServerFailsIsAnErrorForThatCallAndTheBridgeGoesOn() throws {
        let p = try Provider(script: "mcp_server.py")
        defer { p.stop() }
        let url = try #require(p.readyWords.first)
        let box = try MCPServerTests.machine(p)
        let input = Self.lines([Self.call(#""failed""#, "add", #"{"a":500,"b":1}"#), Self.call(#""after""#, "add", #"{"a":2,"b":3}"#)])
        let r = try box.signin(["mcp", url], stdin: input)
        #expect(r.status == 0, "\(r.stdout) \(r.stderr)")
        let out = Self.messages(r.stdout)
        let failed = try #require(out.first { $0["id"] as? String == "failed" }, "\(r.stdout)")
        let error = try #require(failed["error"] as? [String: Any], "\(failed)")
        #expect((error["message"] as? String)?.contains("http_500") == true && (error["message"] as? String)?.contains("the tool server is down") == true, "\(error)")
        let answered = out.first { $0["id"] as? String == "after" }
        #expect(((answered?["result"] as? [String: Any])?["content"] as? [[String: Any]])?.first?["text"] as? String == "5", "\(r.stdout) \(r.stderr)")
        let requests = (try MCPServerTests.stats(p)["mcp_requests"] as? [[String: Any]]) ?? []
        #expect(requests.last?["method"] as? String == "DELETE", "the session ended as usual: \(requests)")
    }

    /// `notifications/cancelled` from the client ends that request's POST: no answer comes for it, the others are
    /// answered, and the bridge does not wait for the abandoned one when its input closes.
    @Test func aCancelledRequestIsAbandoned() throws {
        let p = try Provider(script: "mcp_server.py")
        defer { p.stop() }
        let url = try #require(p.readyWords.first)
        let box = try MCPServerTests.machine(p)
        let input = Self.lines([Self.call(#""long""#, "slow", #"{"ms":4000}"#),
                                #"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"long","reason":"the person gave up"}}"#,
                                Self.call(#""after""#, "add", #"{"a":1,"b":2}"#)])
        let r = try box.signin(["mcp", url], stdin: input)
        #expect(r.status == 0, "\(r.stdout) \(r.stderr)")
        let ids = Self.messages(r.stdout).compactMap { $0["id"] as? String }
        #expect(ids.contains("after") && !ids.contains("long"), "\(r.stdout)")
    }

    /// A POST stream the server closes before its answer (allowed since 2025-11-25, once an event id was sent) is
    /// resumed with GET and `Last-Event-ID`, and the answer reaches the client.
    @Test func aStreamClosedBeforeItsAnswerIsResumed() throws {
        let p = try Provider(script: "mcp_server.py", arguments: ["--resumable"])
        defer { p.stop() }
        let url = try #require(p.readyWords.first)
        let box = try MCPServerTests.machine(p)
        // Servers close a POST's stream early only for 2025-11-25 and later.
        let r = try box.signin(["mcp", url], stdin: Self.lines([Self.call(#""cut""#, "interrupted", #"{"ms":300}"#)], version: "2025-11-25"))
        #expect(r.status == 0, "\(r.stdout) \(r.stderr)")
        let answer = Self.messages(r.stdout).first { $0["id"] as? String == "cut" }
        #expect((answer?["result"] as? [String: Any]) != nil, "the answer came after the stream was resumed: \(r.stdout) \(r.stderr)")
        let requests = (try MCPServerTests.stats(p)["mcp_requests"] as? [[String: Any]]) ?? []
        #expect(requests.contains { $0["method"] as? String == "GET" && $0["last_event_id"] is String }, "resumed with Last-Event-ID: \(requests)")
    }

    /// A 401 mid-session (the server forgot its access tokens): one refresh, the request again, no browser. A session
    /// the server ended (404): a new one (the client's initialize sent again), and the call goes on.
    @Test func aRefusedTokenIsRefreshedAndAnEndedSessionStartsAgain() throws {
        let p = try Provider(script: "mcp_server.py")
        defer { p.stop() }
        let url = try #require(p.readyWords.first)
        let box = try MCPServerTests.machine(p)
        let (first, _) = try Self.client(box, "basic", url)
        #expect(first.status == 0, "\(first.stderr)")
        _ = try p.http("POST", "/_forget")
        let refreshesBefore = try MCPServerTests.stats(p)["refreshes"] as? Int ?? 0
        let (refused, answer) = try Self.client(box, "basic", url, env: ["BROWSER": "/bin/false"])
        #expect(refused.status == 0 && answer["sum"] as? String == "5", "\(refused.stdout) \(refused.stderr)")
        #expect(try MCPServerTests.stats(p)["refreshes"] as? Int == refreshesBefore + 1, "one refresh")
        let (renewed, both) = try Self.client(box, "renew", url, env: ["BROWSER": "/bin/false", "MCP_CONTROL": p.issuer])
        #expect(renewed.status == 0 && both["first"] as? String == "2" && both["second"] as? String == "4", "\(renewed.stdout) \(renewed.stderr)")
        #expect(renewed.stderr.contains("ended the session; starting a new one"), "\(renewed.stderr)")
    }

    /// A 403 insufficient_scope on a call: a step-up sign-in for the scopes it names, then the call again.
    @Test func aCallNeedingMoreScopeStepsUp() throws {
        let p = try Provider(script: "mcp_server.py")
        defer { p.stop() }
        let url = try #require(p.readyWords.first)
        let box = try MCPServerTests.machine(p)
        let (run, answer) = try Self.client(box, "stepup", url, env: ["MCP_CONTROL": p.issuer])
        #expect(run.status == 0 && answer["first"] as? String == "2" && answer["second"] as? String == "4", "\(run.stdout) \(run.stderr)")
        let stats = try MCPServerTests.stats(p)
        #expect(Set((stats["authorize"] as? [String: Any])?["scopes"] as? [String] ?? []) == ["mcp", "admin"], "\(stats)")
        let status = try box.signin("status", "--resource", url)
        #expect(status.stdout.contains("admin"), "\(status.stdout)")
    }

    /// A restarted server (every client, token and session forgotten): the refresh fails `invalid_client`, so signin
    /// registers again and signs in again (one more browser launch), and the client's call goes through.
    @Test func aServerThatForgotItsClientGetsANewRegistration() throws {
        let p = try Provider(script: "mcp_server.py")
        defer { p.stop() }
        let url = try #require(p.readyWords.first)
        let box = try MCPServerTests.machine(p)
        let (first, _) = try Self.client(box, "basic", url)
        #expect(first.status == 0, "\(first.stderr)")
        _ = try p.http("POST", "/_restart")
        let (again, answer) = try Self.client(box, "basic", url)
        #expect(again.status == 0 && answer["sum"] as? String == "5", "\(again.stdout) \(again.stderr)")
        #expect(try MCPServerTests.stats(p)["registrations"] as? Int == 2, "registered again")
        #expect(Self.browserLaunches(box) == 2)
    }

    /// Three bridges started at once with no sign-in: one browser sign-in, one registration, all three sessions work.
    @Test func severalBridgesAtOnceShareOneSignIn() throws {
        let p = try Provider(script: "mcp_server.py")
        defer { p.stop() }
        let url = try #require(p.readyWords.first)
        let box = try MCPServerTests.machine(p)
        let input = Self.lines([Self.call("1", "add", #"{"a":2,"b":3}"#)])
        let runs = try (0..<3).map { _ in try ParallelRun(box, ["mcp", url], stdin: input) }.map { try $0.wait() }
        for r in runs {
            #expect(r.status == 0 && Self.messages(r.stdout).contains { ($0["result"] as? [String: Any]) != nil && $0["id"] as? Int == 1 }, "\(r.stdout) \(r.stderr)")
        }
        let stats = try MCPServerTests.stats(p)
        #expect(stats["registrations"] as? Int == 1 && stats["authorizations"] as? Int == 1, "one sign-in: \(stats)")
    }

    /// The legacy HTTP+SSE transport (2024-11-05): the initialize POST is refused, the bridge falls back to the GET
    /// stream and its endpoint, and the session works.
    @Test func aLegacySSEServerIsReachedByFallingBack() throws {
        let p = try Provider(script: "mcp_server.py", arguments: ["--sse"])
        defer { p.stop() }
        let url = try #require(p.readyWords.first)
        let box = try MCPServerTests.machine(p)
        let (run, answer) = try Self.client(box, "basic", url)
        #expect(run.status == 0 && answer["sum"] as? String == "5", "\(run.stdout) \(run.stderr)")
        #expect(run.stderr.contains("trying the HTTP+SSE transport"), "\(run.stderr)")
        let (progress, steps) = try Self.client(box, "progress", url, ["--transport", "sse"])
        #expect(progress.status == 0 && steps["progress"] as? [Double] == [1, 2, 3, 4, 5], "\(progress.stdout) \(progress.stderr)")
    }

    /// An HTTP+SSE server whose `endpoint` event names another origin (`localhost` for `127.0.0.1`: the same server
    /// under another name, where the token would be honoured): the session is refused with a message naming the
    /// address, and nothing at all (no initialize, no token, no header) is sent there; with auto's fallback too.
    @Test func anEndpointEventNamingAnotherOriginIsRefusedAndGetsNothing() throws {
        let p = try Provider(script: "mcp_server.py", arguments: ["--sse", "--foreign-endpoint"])
        defer { p.stop() }
        let url = try #require(p.readyWords.first)
        let box = try MCPServerTests.machine(p)
        #expect(try box.signin("login", "--resource", url, "--timeout", "30").status == 0)
        for transport in ["sse", "auto"] {
            let r = try box.signin(["mcp", url, "--transport", transport, "--header", "X-Api-Key: k1"], stdin: Self.lines([Self.call("1", "add", #"{"a":2,"b":3}"#)]))
            let out = Self.messages(r.stdout)
            let initialize = out.first { $0["id"] as? Int == 0 }
            let message = (initialize?["error"] as? [String: Any])?["message"] as? String
            #expect(message?.contains("not on the origin") == true, "\(r.stdout) \(r.stderr)")
            #expect(r.status != 0 && r.stderr.contains("http://localhost:"), "\(r.status) \(r.stderr)")
        }
        let requests = (try MCPServerTests.stats(p)["mcp_requests"] as? [[String: Any]]) ?? []
        #expect(!requests.isEmpty && requests.allSatisfy { ($0["host"] as? String)?.hasPrefix("127.0.0.1") == true }, "nothing went to localhost: \(requests)")
        #expect(!requests.contains { ($0["method"] as? String) == "POST" && ($0["host"] as? String)?.hasPrefix("localhost") == true })
    }

    /// A server that cannot be reached: the client's initialize gets a JSON-RPC error, standard error names the
    /// address and the cause, and the bridge exits 5 at once.
    @Test func aServerThatIsDownIsSaidAtOnce() throws {
        let port = try freeLoopbackPort()
        let url = "http://127.0.0.1:\(port)/mcp"
        let box = try Sandbox(issuer: "http://127.0.0.1:\(port)")
        box.environment["SIGNIN_CONFIG"] = ""
        // The sign-in held for it (as after an earlier run) is not needed to tell: nothing answers at all.
        let r = try box.signin(["mcp", url], stdin: Self.lines([]))
        #expect(r.status == 5, "\(r.status) \(r.stdout) \(r.stderr)")
        let out = Self.messages(r.stdout)
        #expect(out.count == 1 && out.first?["id"] as? Int == 0 && out.first?["error"] != nil, "\(r.stdout)")
        #expect(r.stderr.contains("127.0.0.1:\(port)"), "\(r.stderr)")
    }
}

/// A `signin mcp` run as a client runs it: messages written one at a time, each answer read before the next is sent.
final class LiveBridge: @unchecked Sendable {
    let process = Process()
    private let input = Pipe()
    private let outPipe = Pipe()
    private let errURL: URL
    private var buffer = Data()

    private let exited = DispatchSemaphore(value: 0)

    /// `signin ARGS` in `box`'s environment (with `extra`), or exactly `environment`; `through`: a command that runs
    /// it (`unshare ...`), its arguments before signin's path.
    init(_ box: Sandbox, _ args: [String], env extra: [String: String] = [:], environment: [String: String]? = nil, through: [String] = []) throws {
        errURL = box.root.appendingPathComponent("bridge-\(UUID().uuidString).err")
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        process.executableURL = URL(fileURLWithPath: through.first ?? Paths.signin)
        process.arguments = through.isEmpty ? args : Array(through.dropFirst()) + [Paths.signin] + args
        let exited = self.exited
        process.terminationHandler = { _ in exited.signal() }
        var env = environment ?? box.environment
        env.merge(extra) { $1 }
        process.environment = env.filter { !$0.value.isEmpty }
        process.standardInput = input
        process.standardOutput = outPipe
        process.standardError = try FileHandle(forWritingTo: errURL)
        try process.run()
    }

    var stderr: String { (try? String(contentsOf: errURL, encoding: .utf8)) ?? "" }

    deinit {
        // A bridge that a failed test left running ends with the test: it would write into its sandbox after the
        // sandbox was removed, leaving a folder behind.
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    func send(_ line: String) { input.fileHandleForWriting.write(Data((line + "\n").utf8)) }

    /// The next message on standard output (nil once it closed).
    func next() -> [String: Any]? {
        while true {
            if let nl = buffer.firstIndex(of: 10) {
                let line = Data(buffer[buffer.startIndex..<nl])
                buffer.removeSubrange(buffer.startIndex...nl)
                return (try? JSONSerialization.jsonObject(with: line) as? [String: Any]) ?? ["unparsed": String(decoding: line, as: UTF8.self)]
            }
            let chunk = outPipe.fileHandleForReading.availableData
            if chunk.isEmpty { return nil }
            buffer.append(chunk)
        }
    }

    /// The answer to the request with integer id `id` (messages before it skipped).
    func answer(_ id: Int) -> [String: Any]? {
        while let m = next() { if m["id"] as? Int == id, m["method"] == nil { return m } }
        return nil
    }

    /// Sends `request` and returns its answer.
    func ask(_ id: Int, _ request: String) -> [String: Any]? {
        send(request)
        return answer(id)
    }

    /// The client's initialize and `initialized`, its answer read.
    func start() -> [String: Any]? {
        let initialize = #"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#
        let answer = ask(0, initialize)
        send(#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        return answer
    }

    /// How a bridge ended when its client went, as the MCP SDKs' stdio clients end one.
    enum Ending: Equatable {
        /// It exited by itself within the client's grace, with this status.
        case onItsOwn(Int32)
        /// The client had to send SIGTERM (then it exited), or SIGKILL.
        case terminated, killed
    }

    /// Ends the bridge as the MCP SDK's stdio client does: closes standard input (or, with `signal`, sends it at once),
    /// waits its 2 s grace, sends SIGTERM, waits 2 s more, kills. Says which of these ended it.
    func endAsAClientDoes(signal: Int32? = nil) -> Ending {
        if let signal { kill(process.processIdentifier, signal) } else { try? input.fileHandleForWriting.close() }
        if exited.wait(timeout: .now() + 2) == .success { return .onItsOwn(process.terminationStatus) }
        kill(process.processIdentifier, SIGTERM)
        if exited.wait(timeout: .now() + 2) == .success { return .terminated }
        kill(process.processIdentifier, SIGKILL)
        exited.wait()
        return .killed
    }

    /// Closes standard input and waits for the exit: its status.
    func finish() -> Int32 {
        try? input.fileHandleForWriting.close()
        while next() != nil {}
        process.waitUntilExit()
        return process.terminationStatus
    }
}

/// The eighth review's loops: a server that keeps refusing, step-ups that dropped what was held, a stream that
/// reconnects without bound, a bridge that never saw the next sign-in.
@Suite struct MCPBridgeRefusalTests {
    static func start(_ misbehave: String) throws -> (Provider, String, Sandbox) {
        let p = try Provider(script: "mcp_server.py")
        let url = try #require(p.readyWords.first)
        let box = try MCPServerTests.machine(p)
        #expect(try box.signin("login", "--resource", url, "--timeout", "30").status == 0)
        _ = try p.http("POST", "/_misbehave", body: Data(misbehave.utf8))
        return (p, url, box)
    }

    static func errorText(_ m: [String: Any]?) -> String { ((m?["error"] as? [String: Any])?["message"] as? String) ?? "" }

    /// `signin mcp URL` started in `box` (its initialize answered), then add(2, 3) called `calls` times, each answer
    /// read before the next call: the bridge (still running) and the answers, in order.
    static func addCalls(_ box: Sandbox, _ url: String, _ calls: Int) throws -> (LiveBridge, [[String: Any]?]) {
        let bridge = try LiveBridge(box, ["mcp", url])
        #expect(bridge.start()?["result"] != nil)
        return (bridge, (1...calls).map { id in bridge.ask(id, MCPBridgeTests.call(String(id), "add", #"{"a":2,"b":3}"#)) })
    }

    /// Every call answered 401, even with a token from a new sign-in: one sign-in in the browser for the whole run,
    /// then each call gets an error naming the command to run; a person's new sign-in lifts it.
    @Test func aServerRefusingEveryCallGetsOneSignInNotOneEach() throws {
        let (p, url, box) = try Self.start(#"{"calls":"401"}"#)
        defer { p.stop() }
        let launches = MCPBridgeTests.browserLaunches(box)
        let (bridge, answers) = try Self.addCalls(box, url, 4)
        for (id, answer) in zip(1..., answers) {
            #expect(Self.errorText(answer).contains("signin login --resource"), "call \(id): \(answer ?? [:])")
        }
        #expect(MCPBridgeTests.browserLaunches(box) - launches <= 1, "at most one sign-in in the browser: \(box.standinSteps())")
        #expect(bridge.finish() == 0)
    }

    /// Every refresh refused `invalid_client` and every call 401: one registration anew and one sign-in, not one per call.
    @Test func aServerForgettingEveryClientIsRegisteredAtOnce() throws {
        let (p, url, box) = try Self.start(#"{"calls":"401","refresh":"invalid_client"}"#)
        defer { p.stop() }
        let launches = MCPBridgeTests.browserLaunches(box)
        let (bridge, answers) = try Self.addCalls(box, url, 4)
        for (id, answer) in zip(1..., answers) {
            #expect(answer?["error"] != nil, "call \(id): \(answer ?? [:])")
        }
        #expect(bridge.finish() == 0)
        let stats = try MCPServerTests.stats(p)
        #expect((stats["registrations"] as? Int ?? 0) <= 2, "the first and one anew: \(stats)")
        #expect(MCPBridgeTests.browserLaunches(box) - launches <= 1)
    }

    /// A 403 naming a new scope on every call: one step-up, then errors that name the scope; not one step-up each.
    @Test func aServerAskingANewScopeEachTimeGetsOneStepUp() throws {
        let (p, url, box) = try Self.start(#"{"calls":"new-scope"}"#)
        defer { p.stop() }
        let launches = MCPBridgeTests.browserLaunches(box)
        let (bridge, answers) = try Self.addCalls(box, url, 4)
        for (id, answer) in zip(1..., answers) {
            #expect(Self.errorText(answer).contains("did not grant s"), "call \(id): \(answer ?? [:])")
        }
        #expect(bridge.finish() == 0)
        #expect(MCPBridgeTests.browserLaunches(box) - launches == 1, "one step-up: \(box.standinSteps())")
        #expect(try MCPServerTests.stats(p)["registrations"] as? Int == 1)
    }

    /// A read tool and a write tool by turns: the step-up asks the scopes held and the one named, so after it both
    /// tools work with no further sign-in.
    @Test func aStepUpKeepsTheScopesHeld() throws {
        let (p, url, box) = try Self.start(#"{"calls":"write-admin"}"#)
        defer { p.stop() }
        let launches = MCPBridgeTests.browserLaunches(box)
        let bridge = try LiveBridge(box, ["mcp", url])
        #expect(bridge.start()?["result"] != nil)
        for id in 1...6 {
            let call = id % 2 == 0 ? MCPBridgeTests.call(String(id), "write", #"{"text":"n"}"#) : MCPBridgeTests.call(String(id), "add", #"{"a":2,"b":3}"#)
            let answer = bridge.ask(id, call)
            #expect(answer?["result"] != nil, "call \(id): \(answer ?? [:]) \(bridge.stderr)")
        }
        #expect(bridge.finish() == 0)
        #expect(MCPBridgeTests.browserLaunches(box) - launches == 1, "one step-up: \(box.standinSteps())")
        let scopes = Set((try MCPServerTests.stats(p)["authorize"] as? [String: Any])?["scopes"] as? [String] ?? [])
        #expect(scopes.isSuperset(of: ["mcp", "admin"]), "\(scopes)")
    }

    /// The session's GET stream ending at once with `retry: 0`, or refused and accepted by turns, while a call takes
    /// two seconds at the server: a handful of reconnections and at most one refresh, not thousands.
    @Test func aStreamThatEndsAtOnceIsReconnectedWithBackoff() throws {
        for (mode, maxGets) in [("retry0", 8), ("alternate", 8)] {
            let (p, url, box) = try Self.start(#"{"stream":"\#(mode)"}"#)
            defer { p.stop() }
            let refreshes = try MCPServerTests.stats(p)["refreshes"] as? Int ?? 0
            let bridge = try LiveBridge(box, ["mcp", url])
            #expect(bridge.start()?["result"] != nil)
            let answer = bridge.ask(1, MCPBridgeTests.call("1", "slow", #"{"ms":2000}"#))
            #expect(answer?["result"] != nil, "\(answer ?? [:])")
            #expect(bridge.finish() == 0)
            let stats = try MCPServerTests.stats(p)
            #expect((stats["stream_gets"] as? Int ?? 0) <= maxGets, "\(mode): \(stats["stream_gets"] ?? 0) reconnections in two seconds")
            #expect((stats["refreshes"] as? Int ?? 0) - refreshes <= 1, "\(mode): at most one refresh: \(stats["refreshes"] ?? 0)")
        }
    }

    /// A server whose tokens live 30 s (less than the minute signin keeps in hand): ten calls in a row make at most
    /// one refresh (the first token is refreshed once, then each is fresh for the first half of its life), not one each.
    @Test func aShortLivedTokenIsNotRefreshedOnEveryCall() throws {
        let (p, url, box) = try Self.start(#"{"ttl":30}"#)
        defer { p.stop() }
        #expect(try box.signin("login", "--resource", url, "--timeout", "30").status == 0, "signed in again with a 30 s token")
        let before = try MCPServerTests.stats(p)["refreshes"] as? Int ?? 0
        let bridge = try LiveBridge(box, ["mcp", url])
        #expect(bridge.start()?["result"] != nil)
        for id in 1...10 { #expect(bridge.ask(id, MCPBridgeTests.call(String(id), "add", #"{"a":2,"b":3}"#))?["result"] != nil) }
        #expect(bridge.finish() == 0)
        let after = try MCPServerTests.stats(p)["refreshes"] as? Int ?? 0
        #expect(after - before <= 1, "refreshes: \(after - before)")
    }

    /// A sign-in left unfinished in the browser until its timeout: the client's request is answered with the error
    /// and what to do next (the command to run in a terminal), since nobody saw the sign-in's progress.
    @Test func aSignInThatTimedOutSaysWhatToRunNext() throws {
        let p = try Provider(script: "mcp_server.py")
        defer { p.stop() }
        let url = try #require(p.readyWords.first)
        let box = try MCPServerTests.machine(p)
        let bridge = try LiveBridge(box, ["mcp", url, "--timeout", "1"], env: ["STANDIN_MODE": "none"])
        let message = Self.errorText(bridge.start())
        #expect(message.contains("Timed out") && message.contains("signin login --resource \(url)"), "\(message) \(bridge.stderr)")
        _ = bridge.finish()
    }

    /// A 307 from the MCP endpoint to its own origin is followed (method, body and token with it); one to another
    /// origin is refused with a message naming it, and nothing goes there.
    @Test func redirectsAreFollowedOnTheServersOwnOriginOnly() throws {
        let (p, url, box) = try Self.start(#"{"redirect":"same"}"#)
        defer { p.stop() }
        let input = MCPBridgeTests.lines([MCPBridgeTests.call("1", "add", #"{"a":2,"b":3}"#)])
        let followed = try box.signin(["mcp", url], stdin: input)
        #expect(MCPBridgeTests.messages(followed.stdout).contains { $0["id"] as? Int == 1 && $0["result"] != nil }, "\(followed.stdout) \(followed.stderr)")
        #expect((try MCPServerTests.stats(p)["moved"] as? Int ?? 0) >= 3, "initialize, initialized and the call went to the new address")
        _ = try p.http("POST", "/_misbehave", body: Data(#"{"redirect":"other"}"#.utf8))
        let refused = try box.signin(["mcp", url], stdin: input)
        let first = MCPBridgeTests.messages(refused.stdout).first
        #expect(Self.errorText(first).contains("not on its own origin"), "\(refused.stdout) \(refused.stderr)")
        let requests = (try MCPServerTests.stats(p)["mcp_requests"] as? [[String: Any]]) ?? []
        #expect(!requests.contains { ($0["host"] as? String)?.hasPrefix("localhost") == true }, "\(requests)")
    }

    /// A server the configuration lists in `resources`: the bridge presents the person's own grant's token for it (the
    /// configured client's, RFC 8707), as `signin token --resource URL` does; no sign-in or registration of its own.
    @Test func aServerTheConfigurationListsIsServedByTheConfiguredGrant() throws {
        let strict = try Shared.strict.get()
        let box = try strict.signedInSandbox()
        let url = strict.issuer + "/api/mcp-configured"
        try box.editConfig { $0["resources"] = [url] }
        #expect(try box.signin("login").status == 0, "signed in again, asking for the resource")
        let launches = MCPBridgeTests.browserLaunches(box)
        let r = try box.signin(["mcp", url], stdin: MCPBridgeTests.lines([MCPBridgeTests.call("1", "whoami", "{}")]))
        let answer = MCPBridgeTests.messages(r.stdout).first { $0["id"] as? Int == 1 }
        let result = answer?["result"] as? [String: Any]
        #expect(r.status == 0 && result?["client_id"] as? String == box.clientID, "the configured client's token: \(r.stdout) \(r.stderr)")
        #expect(MCPBridgeTests.browserLaunches(box) == launches, "no sign-in of its own")
        let accounts = try box.signin("accounts").stdout
        #expect(!accounts.contains("the API"), "no API sign-in stored: \(accounts)")
    }

    /// After `signin logout --resource URL`, a running bridge (where no browser can open) answers that it is not
    /// signed in; after the person signs in again in a terminal, the same bridge's next call goes through with the
    /// new sign-in.
    @Test func aRunningBridgeSeesTheNextSignIn() throws {
        let (p, url, box) = try Self.start("{}")
        defer { p.stop() }
        let bridge = try LiveBridge(box, ["mcp", url], env: ["BROWSER": "/bin/false"])
        #expect(bridge.start()?["result"] != nil)
        #expect(bridge.ask(1, MCPBridgeTests.call("1", "add", #"{"a":2,"b":3}"#))?["result"] != nil)
        #expect(try box.signin("logout", "--resource", url).status == 0)
        let refused = bridge.ask(2, MCPBridgeTests.call("2", "add", #"{"a":2,"b":3}"#))
        #expect(refused?["error"] != nil, "\(refused ?? [:])")
        #expect(try box.signin("login", "--resource", url, "--timeout", "30").status == 0)
        let again = bridge.ask(3, MCPBridgeTests.call("3", "add", #"{"a":2,"b":3}"#))
        #expect(again?["result"] != nil, "the new sign-in serves: \(again ?? [:]) \(bridge.stderr)")
        #expect(bridge.finish() == 0)
    }
}
