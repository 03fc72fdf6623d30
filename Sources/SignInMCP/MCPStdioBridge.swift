import SignInKit
import SignInBase
import FoundationEssentials

/// MCP's stdio transport on one side, an `MCPClientTransport` on the other: what `signin mcp URL` runs, so that a
/// client that only launches commands (Claude Desktop, an IDE) reaches a remote MCP server.
///
/// Input: one JSON-RPC message per line (UTF-8; a line break ends it, a carriage return before it is dropped), each
/// handed to the transport as it is read, without waiting for earlier answers. A line that is not JSON, or longer
/// than `lineLimit`, is answered with a JSON-RPC parse error (id `null`); JSON that is not a message (no `method`, no
/// `result` or `error`) with an invalid-request error, or, with no id, named in a notice; then the next line is read.
/// Output: each message from the server, on one line of its own, whole (lines never interleave), and nothing else:
/// what a person should know goes to `notice` (standard error, for the command).
public final class MCPStdioBridge: Sendable {
    /// The longest line read (16 MiB): a longer one is refused with a parse error and skipped.
    public static let lineLimit = 16 << 20
    private let output: Int32
    private let writing = Locked(false)
    /// What the client declared in its initialize: URL-mode elicitation (MCP 2025-11-25), and the requests of the
    /// bridge's own sent to it.
    private let client = Locked(ClientSide())

    private struct ClientSide {
        var takesURLElicitation = false
        var asked = 0
    }

    /// The prefix of the ids of the bridge's own requests to the client: their answers are the bridge's, never the
    /// server's.
    static let ownIDPrefix = "\"signin-"
    private let endState = Locked(Ending())

    private struct Ending {
        var reason: Reason?
        var waiter: CheckedContinuation<Reason, Never>?
        var onEnd: [@Sendable () -> Void] = []
    }

    /// Why `run` ends.
    public enum Reason: Sendable {
        /// The input closed, or `stop()` (a signal, say).
        case finished
        /// The client's output closed: no one reads the answers.
        case outputClosed
        /// The transport could not start (the server unreachable, the sign-in refused).
        case failedToStart(SignInError)
    }

    /// A bridge writing the server's messages to `output` (standard output by default).
    public init(output: Int32 = 1) { self.output = output }

    /// Writes `message` as one line of the output, whole (from any thread).
    @Sendable public func write(_ message: JSONRPCMessage) {
        // The message and its line feed written in turn under one lock (lines never interleave), with no copy of a
        // big message made to add the line feed.
        func all(_ b: UnsafeRawBufferPointer) -> Bool {
            var sent = 0
            while sent < b.count {
                let n = Posix.write(output, b.baseAddress! + sent, b.count - sent)
                if n <= 0 { return false }
                sent += n
            }
            return true
        }
        let ok = writing.withLock { _ -> Bool in
            let newline: [UInt8] = [0x0A]
            return message.bytes.withUnsafeBytes(all) && newline.withUnsafeBytes(all)
        }
        if !ok { end(.outputClosed) }
    }

    /// Ends `run` (a stop signal: as if the input closed), or says the transport could not start.
    @Sendable public func end(_ reason: Reason = .finished) {
        let (waiter, handlers) = endState.withLock { e -> (CheckedContinuation<Reason, Never>?, [@Sendable () -> Void]) in
            guard e.reason == nil else { return (nil, []) }
            e.reason = reason
            defer { e.waiter = nil; e.onEnd = [] }
            return (e.waiter, e.onEnd)
        }
        for h in handlers { h() }
        waiter?.resume(returning: reason)
    }

    /// Runs `handler` once the bridge begins to end (the input closed, `end` called), on the thread that ended it.
    public func onEnd(_ handler: @escaping @Sendable () -> Void) {
        let now = endState.withLock { e -> Bool in
            if e.reason != nil { return true }
            e.onEnd.append(handler)
            return false
        }
        if now { handler() }
    }

    /// Reads messages from `input` and sends each through `transport` until the input closes or `end` is called; then
    /// closes the transport: pending answers given within `closing`, the rest abandoned (a sign-in in the browser, a
    /// refresh, a call), the session ended within `ending` more. The MCP SDKs' clients send SIGTERM 2 s after closing
    /// the input: the defaults end well before.
    public func run(_ transport: MCPClientTransport, input: Int32 = 0, closing: Duration = .milliseconds(800), ending: Duration = .milliseconds(500),
                    notice: @escaping @Sendable (String) -> Void) async -> Reason {
        let output = self
        DedicatedThread.start(canceller: nil, {
            var reader = LineReader(fd: input, limit: Self.lineLimit)
            while let line = reader.next() {
                switch line {
                case .tooLong(let count):
                    output.write(.error(id: nil, code: JSONRPCMessage.parseError, message: "signin: a line of \(count) bytes is longer than the \(Self.lineLimit) bytes a message may be; skipped"))
                case .line(let bytes):
                    guard !bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) else { continue }
                    if let message = JSONRPCMessage(bytes, checked: true) {
                        if case .response(let id?) = message.kind, id.json.hasPrefix(Self.ownIDPrefix) {
                            // The client's answer to the bridge's own request (a sign-in page it offered): kept here.
                            let action = message.result?.object?["action"]?.string ?? "an error"
                            if action != "accept" { notice("the MCP client answered the offered sign-in page with \(action); the sign-in waits until it times out or the client goes") }
                            continue
                        }
                        if message.method == "initialize", message.params?.object?["capabilities"]?.object?["elicitation"]?.object?["url"] != nil {
                            output.client.withLock { $0.takesURLElicitation = true }
                        }
                        transport.send(message)
                        continue
                    }
                    var parser = JSONParser(bytes: bytes)
                    switch Result(catching: { () throws(JSONParser.Failure) -> JSONValue in try parser.document() }) {
                    case .failure(let f):
                        output.write(.error(id: nil, code: JSONRPCMessage.parseError, message: "signin: not JSON (\(f.reason) at byte \(f.offset))"))
                    case .success(let value):
                        if let id = value.object?["id"], let text = Self.idText(id) {
                            output.write(.error(id: JSONRPCMessage.ID(json: text), code: JSONRPCMessage.invalidRequest, message: "signin: not a JSON-RPC message (no method, result or error)"))
                        } else {
                            notice("a line on standard input is JSON but not a JSON-RPC message; skipped")
                        }
                    }
                }
            }
            output.end(.finished)
        }, then: { _ in })
        let reason = await ended()
        await transport.close(waitingUpTo: { if case .finished = reason { return closing } else { return .zero } }(), ending: ending)
        // The input may close before the first initialize failed (a client that wrote it and closed at once).
        if case .finished = reason, let failure = transport.startFailure { return .failedToStart(failure) }
        return reason
    }

    /// Offers `url` to the person through the client (MCP 2025-11-25's URL-mode `elicitation/create`, a request of
    /// the bridge's own whose answer stays here), when the client declared it takes one; false when it did not.
    public func offerPage(_ url: String, message: String) -> Bool {
        guard let n = client.withLock({ c -> Int? in
            guard c.takesURLElicitation else { return nil }
            c.asked += 1
            return c.asked
        }) else { return false }
        let id = "signin-elicitation-\(n)"
        let text = "{\"jsonrpc\":\"2.0\",\"id\":\(JSONValueOut.quote(id)),\"method\":\"elicitation/create\",\"params\":{\"mode\":\"url\",\"message\":\(JSONValueOut.quote(message)),\"url\":\(JSONValueOut.quote(url)),\"elicitationId\":\(JSONValueOut.quote(id))}}"
        self.write(JSONRPCMessage(bytes: Array(text.utf8), kind: .request(id: JSONRPCMessage.ID(json: JSONValueOut.quote(id)), method: "elicitation/create")))
        return true
    }

    /// Where nothing can be carried (the command line names a variable that is not set, say): every request read
    /// from `input` is answered with a JSON-RPC error saying `reason`, until the input closes or `end` is called; the
    /// client hears why at its first request instead of a closed pipe.
    public func refuseAll(input: Int32 = 0, reason: String) async {
        let output = self
        DedicatedThread.start(canceller: nil, {
            var reader = LineReader(fd: input, limit: Self.lineLimit)
            while let line = reader.next() {
                guard case .line(let bytes) = line, let id = JSONRPCMessage(bytes, checked: true)?.requestID else { continue }
                output.write(.error(id: id, code: JSONRPCMessage.transportError, message: "signin: \(reason)"))
            }
            output.end(.finished)
        }, then: { _ in })
        _ = await ended()
    }

    /// Returns once the bridge ends (`end`), with why.
    private func ended() async -> Reason {
        await withCheckedContinuation { k in
            let done = endState.withLock { e -> Reason? in
                if let r = e.reason { return r }
                e.waiter = k
                return nil
            }
            if let done { k.resume(returning: done) }
        }
    }

    private static func idText(_ id: JSONValue) -> String? {
        if case .string(let s) = id { return JSONValueOut.quote(s) }
        return id.wholeNumber.map { String($0) }
    }
}

/// Lines of a descriptor, read in large pieces.
struct LineReader {
    enum Line { case line([UInt8]), tooLong(Int) }
    let fd: Int32
    let limit: Int
    private var buffer: [UInt8] = []
    private var start = 0
    private var skipping = 0
    private var eof = false
    /// What each read fills, made once.
    private var chunk = [UInt8](repeating: 0, count: 1 << 16)

    init(fd: Int32, limit: Int) {
        self.fd = fd
        self.limit = limit
    }

    /// The next line (without its line break), or nil at the end of the input.
    mutating func next() -> Line? {
        while true {
            if let nl = buffer[start...].firstIndex(of: 0x0A) {
                var line = Array(buffer[start..<nl])
                start = nl + 1
                if line.last == 0x0D { line.removeLast() }
                if skipping > 0 {
                    let count = skipping + line.count
                    skipping = 0
                    return .tooLong(count)
                }
                return .line(line)
            }
            if start > 0 {
                buffer.removeFirst(start)
                start = 0
            }
            if buffer.count > limit {
                // A line past the limit: dropped as it comes, and said once it ends.
                skipping += buffer.count
                buffer.removeAll(keepingCapacity: true)
            }
            if eof {
                guard !buffer.isEmpty || skipping > 0 else { return nil }
                defer { buffer = []; skipping = 0 }
                return skipping > 0 ? .tooLong(skipping + buffer.count) : .line(buffer)
            }
            let n = chunk.withUnsafeMutableBytes { Posix.read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { eof = true; continue }
            buffer.append(contentsOf: chunk[0..<n])
        }
    }
}
