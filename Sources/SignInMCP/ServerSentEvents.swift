import FoundationEssentials

/// A reader of a `text/event-stream` body (the HTML Living Standard's server-sent events, as MCP's streamable HTTP and
/// HTTP+SSE transports use them), fed the body's bytes as they arrive, in pieces of any size. Each complete event is
/// handed on at its blank line; the last event ID and the server's `retry` are kept, for a reconnection.
struct ServerSentEvents {
    /// One event: its type (`message` unless `event:` said), its data (the `data:` lines joined by line feeds), and
    /// the last event ID seen so far in the stream (the one a reconnection names in `Last-Event-ID`).
    struct Event: Sendable, Equatable {
        var type: String
        /// The data's bytes, as the stream carried them (a message is read from these, not from a copy as text).
        var bytes: [UInt8]
        var lastEventID: String?
        /// The data as text.
        var data: String { String(decoding: bytes, as: UTF8.self) }

        init(type: String, bytes: [UInt8], lastEventID: String?) {
            self.type = type
            self.bytes = bytes
            self.lastEventID = lastEventID
        }

        init(type: String, data: String, lastEventID: String?) { self.init(type: type, bytes: Array(data.utf8), lastEventID: lastEventID) }
    }

    /// The last `id:` the stream gave (kept across events, as the standard says).
    private(set) var lastEventID: String?
    /// The reconnection time the server asked for with `retry:`, in milliseconds.
    private(set) var retryMilliseconds: Int?
    /// More than this many bytes in one line or one event's data is refused (`tooLarge`): a server's stream cannot
    /// make the reader hold without bound.
    let limit: Int
    private(set) var tooLarge = false

    private var line: [UInt8] = []
    private var data: [UInt8] = []
    private var hasData = false
    private var type = ""
    private var afterCR = false
    /// In a `data:` line, past its field name: its bytes go straight to `data` (a 1 MB message is not held twice).
    private var inData = false
    private var skipSpace = false

    init(limit: Int = 64 << 20) { self.limit = limit }

    /// Reads `bytes`; `deliver` gets each event completed by them, in order.
    mutating func feed(_ bytes: UnsafeRawBufferPointer, _ deliver: (Event) -> Void) {
        for b in bytes {
            if afterCR {
                afterCR = false
                if b == 0x0A { continue }  // CRLF: one line end
            }
            switch b {
            case 0x0D:
                afterCR = true
                endLine(deliver)
            case 0x0A:
                endLine(deliver)
            default:
                if inData {
                    if skipSpace {
                        skipSpace = false
                        if b == 0x20 { continue }
                    }
                    guard data.count < limit else { tooLarge = true; continue }
                    data.append(b)
                    continue
                }
                guard line.count < limit else { tooLarge = true; continue }
                line.append(b)
                if line.count == 5, line.elementsEqual("data:".utf8) {
                    inData = true
                    skipSpace = true
                    hasData = true
                    line.removeAll(keepingCapacity: true)
                }
            }
        }
    }

    private mutating func endLine(_ deliver: (Event) -> Void) {
        if inData {
            // The end of a `data:` line whose bytes went to `data` as they came.
            inData = false
            skipSpace = false
            data.append(0x0A)
            return
        }
        // A big line's room is given back rather than kept for the rest of the stream.
        defer { line.removeAll(keepingCapacity: line.capacity <= 1 << 16) }
        if line.isEmpty {
            // The blank line: dispatch, handing the data's bytes over (no copy kept here).
            defer { hasData = false; type = "" }
            guard hasData else { return }
            if data.last == 0x0A { data.removeLast() }
            var bytes: [UInt8] = []
            swap(&bytes, &data)
            deliver(Event(type: type.isEmpty ? "message" : type, bytes: bytes, lastEventID: lastEventID))
            return
        }
        if line.first == UInt8(ascii: ":") { return }  // a comment (a keep-alive)
        let colon = line.firstIndex(of: UInt8(ascii: ":"))
        let field = String(decoding: line[..<(colon ?? line.endIndex)], as: UTF8.self)
        var value = colon.map { line[line.index(after: $0)...] } ?? line[line.endIndex...]
        if value.first == 0x20 { value = value.dropFirst() }
        switch field {
        case "data":
            guard data.count + value.count < limit else { tooLarge = true; return }
            data.append(contentsOf: value)
            data.append(0x0A)
            hasData = true
        case "event": type = String(decoding: value, as: UTF8.self)
        case "id": if !value.contains(0) { lastEventID = String(decoding: value, as: UTF8.self) }
        case "retry": if !value.isEmpty, value.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let ms = Int(String(decoding: value, as: UTF8.self)) { retryMilliseconds = ms }
        default: break
        }
    }
}
