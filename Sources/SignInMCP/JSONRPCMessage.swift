import SignInBase
import FoundationEssentials

/// One JSON-RPC 2.0 message as MCP's transports carry it: the bytes as written (never re-encoded: a client and a
/// server see each other's text), and what a transport needs of it, read from its top level alone (`kind`), so a
/// 1 MB result is scanned, not parsed.
public struct JSONRPCMessage: Sendable {
    /// A message's `id` as its JSON text (`7`, `"a-1"`): two ids are the same when their text is.
    public struct ID: Hashable, Sendable, CustomStringConvertible {
        /// The id's JSON text.
        public let json: String
        public init(json: String) { self.json = json }
        public var description: String { json }
    }

    /// What the message is.
    public enum Kind: Sendable, Equatable {
        /// A request (`method` and `id`): it is answered.
        case request(id: ID, method: String)
        /// A notification (`method`, no `id`).
        case notification(method: String)
        /// A response (`result` or `error`, with the request's `id`; `null` for an error about an unreadable request).
        case response(id: ID?)
        /// A batch (a JSON array: MCP 2025-03-26 allowed them, later revisions dropped them); passed on as it is.
        case batch
    }

    /// The message's text, on one line (any line break between its tokens turned into a space).
    public let bytes: [UInt8]
    public let kind: Kind

    /// The message in `bytes` (one JSON-RPC message, from either side), or nil when it is not one (not JSON, not an
    /// object or array, no `method` and no `result` or `error`). `checked`: the whole text is checked to be valid
    /// JSON (what a client wrote); otherwise its top level is scanned only (what a server answered).
    public init?(_ bytes: [UInt8], checked: Bool = false) {
        if checked {
            var parser = JSONParser(bytes: bytes)
            guard (try? parser.document()) != nil else { return nil }
        }
        guard let kind = Self.scan(bytes) else { return nil }
        self.kind = kind
        // JSON allows a line break only between tokens (never inside a string), so a space there means the same.
        self.bytes = bytes.contains(where: { $0 == 0x0A || $0 == 0x0D }) ? bytes.map { $0 == 0x0A || $0 == 0x0D ? 0x20 : $0 } : bytes
    }

    init(bytes: [UInt8], kind: Kind) {
        self.bytes = bytes
        self.kind = kind
    }

    /// The message's text.
    public var text: String { String(decoding: bytes, as: UTF8.self) }

    /// The request's id, for a request.
    public var requestID: ID? { if case .request(let id, _) = kind { return id } else { return nil } }

    /// The method, for a request or a notification.
    public var method: String? {
        switch kind {
        case .request(_, let m), .notification(let m): return m
        default: return nil
        }
    }

    /// A JSON-RPC error response to the request `id` (nil: `null`, for a request whose id could not be read).
    public static func error(id: ID?, code: Int, message: String) -> JSONRPCMessage {
        let text = "{\"jsonrpc\":\"2.0\",\"id\":\(id?.json ?? "null"),\"error\":{\"code\":\(code),\"message\":\(JSONValueOut.quote(message))}}"
        return JSONRPCMessage(bytes: Array(text.utf8), kind: .response(id: id))
    }

    /// JSON-RPC's code for a message that is not JSON (-32700).
    public static let parseError = -32700
    /// JSON-RPC's code for a message that is JSON but not a request (-32600).
    public static let invalidRequest = -32600
    /// The code of signin's own errors about the connection to the server (the server-error range, -32000).
    public static let transportError = -32000

    /// The member named `key` of the message's top-level object, parsed (a small one: `result`'s `protocolVersion`,
    /// `params`' `requestId`), or nil.
    func member(_ key: String) -> JSONValue? {
        var parser = JSONParser(bytes: bytes)
        guard case .object(let o)? = try? parser.document() else { return nil }
        return o[key]
    }

    // MARK: The top-level scan

    /// The kind of the message in `b`, from its top-level members (their values skipped, not built).
    static func scan(_ b: [UInt8]) -> Kind? {
        var i = 0
        func space() { while i < b.count, b[i] == 0x20 || b[i] == 0x09 || b[i] == 0x0A || b[i] == 0x0D { i += 1 } }
        space()
        guard i < b.count else { return nil }
        if b[i] == UInt8(ascii: "[") { return .batch }
        guard b[i] == UInt8(ascii: "{") else { return nil }
        i += 1
        var id: String?, method: String?, answered = false, idIsNull = false
        space()
        if i < b.count, b[i] == UInt8(ascii: "}") { return nil }
        while i < b.count {
            space()
            guard let keyRange = skipString(b, &i) else { return nil }
            let key = String(decoding: b[(keyRange.lowerBound + 1)..<(keyRange.upperBound - 1)], as: UTF8.self)
            space()
            guard i < b.count, b[i] == UInt8(ascii: ":") else { return nil }
            i += 1
            space()
            let start = i
            guard skipValue(b, &i, depth: 0) else { return nil }
            let raw = b[start..<i]
            switch key {
            case "id":
                if raw.elementsEqual("null".utf8) { idIsNull = true } else if raw.first == UInt8(ascii: "\"") || raw.first.map({ $0 == UInt8(ascii: "-") || ($0 >= 0x30 && $0 <= 0x39) }) == true {
                    id = String(decoding: raw, as: UTF8.self)
                } else { return nil }
            case "method":
                guard raw.first == UInt8(ascii: "\""), let m = (try? { var p = JSONParser(bytes: Array(raw)); return try p.document() }())?.string else { return nil }
                method = m
            case "result", "error": answered = true
            default: break
            }
            space()
            guard i < b.count else { return nil }
            if b[i] == UInt8(ascii: ",") { i += 1; continue }
            guard b[i] == UInt8(ascii: "}") else { return nil }
            i += 1
            space()
            guard i == b.count else { return nil }
            if let method { return id.map { .request(id: ID(json: $0), method: method) } ?? .notification(method: method) }
            if answered { return .response(id: idIsNull ? nil : id.map(ID.init(json:))) }
            return nil
        }
        return nil
    }

    /// Skips the string at `i` (its quotes included); its range, or nil when it is not a complete string.
    private static func skipString(_ b: [UInt8], _ i: inout Int) -> Range<Int>? {
        guard i < b.count, b[i] == UInt8(ascii: "\"") else { return nil }
        let start = i
        i += 1
        while i < b.count {
            switch b[i] {
            case UInt8(ascii: "\\"): i += 2
            case UInt8(ascii: "\""):
                i += 1
                return start..<i
            case 0..<0x20: return nil
            default: i += 1
            }
        }
        return nil
    }

    /// Skips one value at `i` (brackets balanced, strings whole); false when it is not one.
    private static func skipValue(_ b: [UInt8], _ i: inout Int, depth: Int) -> Bool {
        guard depth < 512, i < b.count else { return false }
        switch b[i] {
        case UInt8(ascii: "\""): return skipString(b, &i) != nil
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            var stack: [UInt8] = [b[i] == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")]
            i += 1
            while i < b.count, let close = stack.last {
                switch b[i] {
                case UInt8(ascii: "\""): guard skipString(b, &i) != nil else { return false }; continue
                case UInt8(ascii: "{"): stack.append(UInt8(ascii: "}"))
                case UInt8(ascii: "["): stack.append(UInt8(ascii: "]"))
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    guard b[i] == close else { return false }
                    stack.removeLast()
                default: break
                }
                i += 1
                guard stack.count < 512 else { return false }
            }
            return stack.isEmpty
        default:
            let start = i
            while i < b.count, !",}] \t\r\n".utf8.contains(b[i]) { i += 1 }
            return i > start
        }
    }
}
