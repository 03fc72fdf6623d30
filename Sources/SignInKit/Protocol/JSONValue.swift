import FoundationEssentials

/// A JSON value of any shape, for provider documents whose members we read one by one (and, behind the CLI's
/// SPI, for what kubectl passes its credential plugins).
@_spi(CLI) public enum JSONValue: Decodable, Sendable, Equatable {
    case null, bool(Bool), number(Double), string(String), array([JSONValue]), object([String: JSONValue])

    public init(from decoder: Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { self = .null }
        else if let b = try? c.decode(Bool.self) { self = .bool(b) }
        else if let n = try? c.decode(Double.self) { self = .number(n) }
        else if let s = try? c.decode(String.self) { self = .string(s) }
        else if let a = try? c.decode([JSONValue].self) { self = .array(a) }
        else { self = .object(try c.decode([String: JSONValue].self)) }
    }

    /// Parses a JSON object; nil for anything else (arrays, scalars, invalid JSON, non-UTF-8).
    public static func object(from data: Data) -> [String: JSONValue]? {
        guard !data.isEmpty, data.count <= 1 << 20 else { return nil }
        var parser = JSONParser(bytes: Array(data))
        guard case .object(let o)? = parser.document() else { return nil }
        return o
    }

    public var string: String? { if case .string(let s) = self { return s } else { return nil } }
    public var bool: Bool? {
        switch self {
        case .bool(let b): return b
        case .string("true"): return true  // some providers send email_verified as a string
        case .string("false"): return false
        default: return nil
        }
    }
    /// An integer, accepting only whole numbers within a sane range (timestamps, lifetimes).
    var int: Int? {
        switch self {
        case .number(let d) where d.rounded() == d && abs(d) < 1e15: return Int(d)
        case .string(let s): return Int(s)  // some providers send expires_in as a string
        default: return nil
        }
    }
    var array: [JSONValue]? { if case .array(let a) = self { return a } else { return nil } }
}

/// RFC 8259 JSON to `JSONValue`, strictly (no comments, trailing commas, leading zeros or invalid UTF-8; at most
/// 512 levels deep). Written here rather than through Foundation's JSONDecoder, whose generic decoding looks
/// types and conformances up at run time: on `signin token`'s cached path that cost more than the rest of the
/// command's own work. Duplicate member names: the first one counts, as with Foundation's decoder before.
struct JSONParser {
    let bytes: [UInt8]
    var i = 0

    init(bytes: [UInt8]) { self.bytes = bytes }

    /// The one value the text holds, or nil when it is not exactly one valid JSON value.
    mutating func document() -> JSONValue? {
        skipSpace()
        guard let v = value(depth: 0) else { return nil }
        skipSpace()
        return i == bytes.count ? v : nil
    }

    private var current: UInt8? { i < bytes.count ? bytes[i] : nil }

    private mutating func skipSpace() {
        while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x0A || bytes[i] == 0x0D || bytes[i] == 0x09 { i += 1 }
    }

    private mutating func value(depth: Int) -> JSONValue? {
        guard depth < 512, let c = current else { return nil }
        switch c {
        case UInt8(ascii: "{"):
            i += 1
            var members: [String: JSONValue] = [:]
            skipSpace()
            if current == UInt8(ascii: "}") { i += 1; return .object(members) }
            while true {
                skipSpace()
                guard current == UInt8(ascii: "\""), let name = string() else { return nil }
                skipSpace()
                guard current == UInt8(ascii: ":") else { return nil }
                i += 1
                skipSpace()
                guard let v = value(depth: depth + 1) else { return nil }
                if members[name] == nil { members[name] = v }
                skipSpace()
                if current == UInt8(ascii: ",") { i += 1; continue }
                guard current == UInt8(ascii: "}") else { return nil }
                i += 1
                return .object(members)
            }
        case UInt8(ascii: "["):
            i += 1
            var items: [JSONValue] = []
            skipSpace()
            if current == UInt8(ascii: "]") { i += 1; return .array(items) }
            while true {
                skipSpace()
                guard let v = value(depth: depth + 1) else { return nil }
                items.append(v)
                skipSpace()
                if current == UInt8(ascii: ",") { i += 1; continue }
                guard current == UInt8(ascii: "]") else { return nil }
                i += 1
                return .array(items)
            }
        case UInt8(ascii: "\""):
            return string().map { .string($0) }
        case UInt8(ascii: "t"): return literal("true") ? .bool(true) : nil
        case UInt8(ascii: "f"): return literal("false") ? .bool(false) : nil
        case UInt8(ascii: "n"): return literal("null") ? .null : nil
        default: return number()
        }
    }

    private mutating func literal(_ word: StaticString) -> Bool {
        let n = word.utf8CodeUnitCount
        guard i + n <= bytes.count else { return false }
        for k in 0..<n where bytes[i + k] != word.utf8Start[k] { return false }
        i += n
        return true
    }

    private func isDigit(_ c: UInt8?) -> Bool { c.map { $0 >= 0x30 && $0 <= 0x39 } ?? false }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
    private mutating func number() -> JSONValue? {
        let start = i
        if current == UInt8(ascii: "-") { i += 1 }
        guard isDigit(current) else { return nil }
        if current == UInt8(ascii: "0") { i += 1 } else { while isDigit(current) { i += 1 } }
        if current == UInt8(ascii: ".") {
            i += 1
            guard isDigit(current) else { return nil }
            while isDigit(current) { i += 1 }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            i += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { i += 1 }
            guard isDigit(current) else { return nil }
            while isDigit(current) { i += 1 }
        }
        guard let d = Double(String(decoding: bytes[start..<i], as: UTF8.self)), d.isFinite else { return nil }
        return .number(d)
    }

    private func hex(_ at: Int) -> UInt32? {
        guard at + 4 <= bytes.count else { return nil }
        var v: UInt32 = 0
        for b in bytes[at..<at + 4] {
            let d: UInt8
            switch b {
            case 0x30...0x39: d = b - 0x30
            case 0x41...0x46: d = b - 0x41 + 10
            case 0x61...0x66: d = b - 0x61 + 10
            default: return nil
            }
            v = v << 4 | UInt32(d)
        }
        return v
    }

    /// A string at `"`; nil when it is unterminated, holds a raw control character, a bad escape, a lone
    /// surrogate or invalid UTF-8.
    private mutating func string() -> String? {
        i += 1
        var out: [UInt8] = []
        var runStart = i
        while i < bytes.count {
            let c = bytes[i]
            if c == UInt8(ascii: "\"") {
                out.append(contentsOf: bytes[runStart..<i])
                i += 1
                return String(validating: out, as: UTF8.self)
            }
            if c < 0x20 { return nil }
            guard c == UInt8(ascii: "\\") else { i += 1; continue }
            out.append(contentsOf: bytes[runStart..<i])
            guard i + 1 < bytes.count else { return nil }
            let e = bytes[i + 1]
            i += 2
            switch e {
            case UInt8(ascii: "\""): out.append(0x22)
            case UInt8(ascii: "\\"): out.append(0x5C)
            case UInt8(ascii: "/"): out.append(0x2F)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                guard var scalar = hex(i) else { return nil }
                i += 4
                if (0xD800...0xDBFF).contains(scalar) {
                    guard i + 6 <= bytes.count, bytes[i] == UInt8(ascii: "\\"), bytes[i + 1] == UInt8(ascii: "u"),
                          let low = hex(i + 2), (0xDC00...0xDFFF).contains(low) else { return nil }
                    i += 6
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00...0xDFFF).contains(scalar) {
                    return nil
                }
                guard let u = Unicode.Scalar(scalar) else { return nil }
                out.append(contentsOf: UTF8.encode(u)!)
            default:
                return nil
            }
            runStart = i
        }
        return nil
    }
}
