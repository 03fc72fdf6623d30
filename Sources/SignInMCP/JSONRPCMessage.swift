import SignInBase
import FoundationEssentials

/// One JSON-RPC 2.0 message as MCP's transports carry it: the bytes as written (never re-encoded: a client and a
/// server see each other's text), and what a transport needs of it, read from its top level alone (`kind`). Every
/// byte is checked to be JSON (RFC 8259: no `NaN`, no `[1,,2]`, no control character or broken UTF-8 in a string)
/// without building the values, so a 1 MB result is checked, not parsed into objects.
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
    /// object or array, no `method` and no `result` or `error`). The whole text is checked to be JSON either way;
    /// `checked` also parses it (kept for callers that asked for it).
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

    /// The member named `key` of the message's top-level object (`params`, `result`, `error`, `id`), parsed; nil
    /// when there is none. Only that member is parsed, so reading a request's `params` costs nothing of a result.
    public func member(_ key: String) -> JSONValue? {
        guard let raw = Self.rawMember(key, in: bytes[...]) else { return nil }
        var parser = JSONParser(bytes: Array(raw))
        return try? parser.document()
    }

    /// The message's `params`, parsed (nil: none).
    public var params: JSONValue? { member("params") }
    /// A response's `result`, parsed (nil: none, or an error response).
    public var result: JSONValue? { member("result") }
    /// An error response's `error` object, parsed (nil: none).
    public var error: JSONValue? { member("error") }
    /// An error response's `code` (nil: not an error response).
    public var errorCode: Int? {
        error?.object?["code"]?.wholeNumber
    }

    /// `params._meta`'s key for the revision a request of MCP 2026-07-28 or later is written in.
    public static let protocolVersionMetaKey = "io.modelcontextprotocol/protocolVersion"
    private static let protocolVersionMetaKeyBytes = Array(protocolVersionMetaKey.utf8)

    /// Whether `needle` occurs in `haystack`: asked of every message, so a plain scan rather than the generic
    /// `firstRange(of:)`, which cost a bridged call more than its JSON parse.
    static func holds(_ needle: [UInt8], _ haystack: [UInt8]) -> Bool {
        guard let first = needle.first, haystack.count >= needle.count else { return false }
        return haystack.withUnsafeBufferPointer { h in
            needle.withUnsafeBufferPointer { n in
                var i = 0
                let last = h.count - n.count
                while i <= last {
                    if h[i] == first {
                        var j = 1
                        while j < n.count && h[i + j] == n[j] { j += 1 }
                        if j == n.count { return true }
                    }
                    i += 1
                }
                return false
            }
        }
    }

    /// The revision a request of MCP 2026-07-28 or later names in `params._meta` (each such request carries its own:
    /// no handshake); nil for a message of the handshake era (2024-11-05 to 2025-11-25).
    public var modernProtocolVersion: String? {
        guard Self.holds(Self.protocolVersionMetaKeyBytes, bytes),
              let params = Self.rawMember("params", in: bytes[...]), let meta = Self.rawMember("_meta", in: params) else { return nil }
        var parser = JSONParser(bytes: Array(meta))
        guard case .object(let o)? = try? parser.document(), case .string(let v)? = o[Self.protocolVersionMetaKey], !v.isEmpty else { return nil }
        return v
    }

    /// The raw JSON text of `params._meta` (nil: none).
    var rawMeta: ArraySlice<UInt8>? { Self.rawMember("params", in: bytes[...]).flatMap { Self.rawMember("_meta", in: $0) } }

    /// This response for the request `id`: itself when it names `id`, else its `result` or `error` under `id` (a
    /// server's error written for a request it could not read, `"id": null` or `"server-error"`).
    public func answering(_ id: ID) -> JSONRPCMessage {
        if case .response(let own?) = kind, own == id { return self }
        let key = Self.rawMember("error", in: bytes[...]) != nil ? "error" : "result"
        guard let value = Self.rawMember(key, in: bytes[...]) else { return self }
        let text = Array("{\"jsonrpc\":\"2.0\",\"id\":\(id.json),\"\(key)\":".utf8) + Array(value) + [UInt8(ascii: "}")]
        return JSONRPCMessage(bytes: text, kind: .response(id: id))
    }

    /// The raw text of the member `key` of the JSON object `b` holds at its slice's start (top level of that object
    /// only), or nil. Read in place: a 1 MB result is never copied to find a member beside it.
    static func rawMember(_ key: String, in b: ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
        let wanted = Array(("\"" + key + "\"").utf8)
        return b.withUnsafeBufferPointer { bytes -> Range<Int>? in
            var i = 0, found: Range<Int>?
            skipSpace(bytes, &i)
            _ = walkObject(bytes, &i, depth: 0) { key, value in
                if bytes[key].elementsEqual(wanted) { found = value }
                return found == nil
            }
            return found
        }.map { b[(b.startIndex + $0.lowerBound)..<(b.startIndex + $0.upperBound)] }
    }

    // MARK: The top-level scan

    /// The kind of the message in `b`, from its top-level members (their values skipped, not built).
    static func scan(_ bytes: [UInt8]) -> Kind? { bytes.withUnsafeBufferPointer { scan(buffer: $0) } }

    private static func scan(buffer b: UnsafeBufferPointer<UInt8>) -> Kind? {
        var i = 0
        func space() { while i < b.count, b[i] == 0x20 || b[i] == 0x09 || b[i] == 0x0A || b[i] == 0x0D { i += 1 } }
        space()
        guard i < b.count else { return nil }
        if b[i] == UInt8(ascii: "[") {
            guard skipValue(b, &i, depth: 0) else { return nil }
            space()
            return i == b.count ? .batch : nil
        }
        var id: String?, method: String?, answered = false, idIsNull = false, invalid = false
        let whole = walkObject(b, &i, depth: 0) { keyRange, valueRange in
            let raw = b[valueRange]
            switch String(decoding: b[(keyRange.lowerBound + 1)..<(keyRange.upperBound - 1)], as: UTF8.self) {
            case "id":
                if raw.elementsEqual("null".utf8) { idIsNull = true } else if raw.first == UInt8(ascii: "\"") || raw.first.map({ $0 == UInt8(ascii: "-") || ($0 >= 0x30 && $0 <= 0x39) }) == true {
                    id = String(decoding: raw, as: UTF8.self)
                } else { invalid = true }
            case "method":
                if raw.first == UInt8(ascii: "\""), let m = (try? { var p = JSONParser(bytes: Array(raw)); return try p.document() }())?.string {
                    method = m
                } else { invalid = true }
            case "result", "error": answered = true
            default: break
            }
            return !invalid
        }
        space()
        guard whole, !invalid, i == b.count else { return nil }
        if let method { return id.map { .request(id: ID(json: $0), method: method) } ?? .notification(method: method) }
        if answered { return .response(id: idIsNull ? nil : id.map(ID.init(json:))) }
        return nil
    }

    /// Walks the JSON object at `i`: each member's key (its quotes included) and value (checked as `skipValue` checks
    /// it) go to `visit`, which answers whether to go on. `i` is left past the closing brace when every member was
    /// visited. False when the text is not an object; true when it is, or when `visit` stopped the walk.
    private static func walkObject(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int, depth: Int, _ visit: (Range<Int>, Range<Int>) -> Bool) -> Bool {
        guard depth < 512, i < b.count, b[i] == UInt8(ascii: "{") else { return false }
        i += 1
        skipSpace(b, &i)
        if i < b.count, b[i] == UInt8(ascii: "}") { i += 1; return true }
        while true {
            skipSpace(b, &i)
            guard let key = skipString(b, &i) else { return false }
            skipSpace(b, &i)
            guard i < b.count, b[i] == UInt8(ascii: ":") else { return false }
            i += 1
            skipSpace(b, &i)
            let start = i
            guard skipValue(b, &i, depth: depth + 1) else { return false }
            guard visit(key, start..<i) else { return true }
            skipSpace(b, &i)
            guard i < b.count else { return false }
            if b[i] == UInt8(ascii: ",") { i += 1; continue }
            guard b[i] == UInt8(ascii: "}") else { return false }
            i += 1
            return true
        }
    }

    /// Skips the string at `i` (its quotes included); its range, or nil when it is not a complete JSON string (an
    /// unknown escape, a control character, bytes that are not UTF-8).
    private static func skipString(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int) -> Range<Int>? {
        guard i < b.count, b[i] == UInt8(ascii: "\"") else { return nil }
        let start = i
        i += 1
        while i < b.count {
            let c = b[i]
            switch c {
            case UInt8(ascii: "\\"):
                guard i + 1 < b.count else { return nil }
                switch b[i + 1] {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                     UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    i += 2
                case UInt8(ascii: "u"):
                    guard i + 5 < b.count, b[(i + 2)...(i + 5)].allSatisfy({ isHexDigit($0) }) else { return nil }
                    i += 6
                default: return nil
                }
            case UInt8(ascii: "\""):
                i += 1
                return start..<i
            case 0..<0x20: return nil
            case 0x80...:
                guard skipUTF8(b, &i) else { return nil }
            default: i += 1
            }
        }
        return nil
    }

    private static func isHexDigit(_ c: UInt8) -> Bool {
        (0x30...0x39).contains(c) || (0x41...0x46).contains(c) || (0x61...0x66).contains(c)
    }

    /// Skips one UTF-8 sequence of two to four bytes at `i` (no overlong form, no surrogate, nothing past U+10FFFF).
    private static func skipUTF8(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int) -> Bool {
        let c = b[i]
        let (length, low, high): (Int, UInt8, UInt8)
        switch c {
        case 0xC2...0xDF: (length, low, high) = (2, 0x80, 0xBF)
        case 0xE0: (length, low, high) = (3, 0xA0, 0xBF)
        case 0xED: (length, low, high) = (3, 0x80, 0x9F)
        case 0xE1...0xEF: (length, low, high) = (3, 0x80, 0xBF)
        case 0xF0: (length, low, high) = (4, 0x90, 0xBF)
        case 0xF4: (length, low, high) = (4, 0x80, 0x8F)
        case 0xF1...0xF3: (length, low, high) = (4, 0x80, 0xBF)
        default: return false
        }
        guard i + length <= b.count, (low...high).contains(b[i + 1]) else { return false }
        for k in 2..<max(2, length) where !(0x80...0xBF).contains(b[i + k]) { return false }
        i += length
        return true
    }

    private static func skipSpace(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int) {
        while i < b.count, b[i] == 0x20 || b[i] == 0x09 || b[i] == 0x0A || b[i] == 0x0D { i += 1 }
    }

    /// Skips one JSON value at `i`, checking it as RFC 8259 writes it (objects, arrays, strings, numbers, literals),
    /// without building it; false when it is not one. What is handed on as a message is JSON through and through.
    private static func skipValue(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int, depth: Int) -> Bool {
        guard depth < 512, i < b.count else { return false }
        switch b[i] {
        case UInt8(ascii: "\""): return skipString(b, &i) != nil
        case UInt8(ascii: "{"): return walkObject(b, &i, depth: depth) { _, _ in true }
        case UInt8(ascii: "["):
            i += 1
            skipSpace(b, &i)
            if i < b.count, b[i] == UInt8(ascii: "]") { i += 1; return true }
            while true {
                skipSpace(b, &i)
                guard skipValue(b, &i, depth: depth + 1) else { return false }
                skipSpace(b, &i)
                guard i < b.count else { return false }
                if b[i] == UInt8(ascii: ",") { i += 1; continue }
                guard b[i] == UInt8(ascii: "]") else { return false }
                i += 1
                return true
            }
        case UInt8(ascii: "t"): return skipLiteral("true", b, &i)
        case UInt8(ascii: "f"): return skipLiteral("false", b, &i)
        case UInt8(ascii: "n"): return skipLiteral("null", b, &i)
        default: return skipNumber(b, &i)
        }
    }

    private static func skipLiteral(_ word: StaticString, _ b: UnsafeBufferPointer<UInt8>, _ i: inout Int) -> Bool {
        let n = word.utf8CodeUnitCount
        guard i + n <= b.count else { return false }
        let matches = word.withUTF8Buffer { w in (0..<n).allSatisfy { b[i + $0] == w[$0] } }
        if matches { i += n }
        return matches
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
    private static func skipNumber(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int) -> Bool {
        func digits() -> Int {
            let s = i
            while i < b.count, (0x30...0x39).contains(b[i]) { i += 1 }
            return i - s
        }
        if i < b.count, b[i] == UInt8(ascii: "-") { i += 1 }
        guard i < b.count else { return false }
        if b[i] == UInt8(ascii: "0") { i += 1 } else if (0x31...0x39).contains(b[i]) { _ = digits() } else { return false }
        if i < b.count, b[i] == UInt8(ascii: ".") {
            i += 1
            guard digits() > 0 else { return false }
        }
        if i < b.count, b[i] == UInt8(ascii: "e") || b[i] == UInt8(ascii: "E") {
            i += 1
            if i < b.count, b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") { i += 1 }
            guard digits() > 0 else { return false }
        }
        return true
    }
}
