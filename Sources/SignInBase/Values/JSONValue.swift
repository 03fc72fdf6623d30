import FoundationEssentials

/// A JSON value of any shape: a provider's claims as it sent them (`SignInUser.userInfo()`), and the provider
/// documents signin reads member by member.
public enum JSONValue: Decodable, Sendable, Equatable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number.
    case number(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object.
    case object([String: JSONValue])

    /// Decodes any JSON value.
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
    package static func object(from data: Data) -> [String: JSONValue]? {
        guard !data.isEmpty, data.count <= 1 << 20 else { return nil }
        var parser = JSONParser(bytes: Array(data))
        guard case .object(let o)? = try? parser.document() else { return nil }
        return o
    }

    /// The string, if this is one.
    public var string: String? { if case .string(let s) = self { return s } else { return nil } }
    /// The number, if this is one.
    public var number: Double? { if case .number(let n) = self { return n } else { return nil } }
    /// The members, if this is an object.
    public var object: [String: JSONValue]? { if case .object(let o) = self { return o } else { return nil } }
    /// The boolean; also the strings "true" and "false", which some providers send (`email_verified`).
    public var bool: Bool? {
        switch self {
        case .bool(let b): return b
        case .string("true"): return true  // some providers send email_verified as a string
        case .string("false"): return false
        default: return nil
        }
    }
    /// An integer, accepting only whole numbers within a sane range (timestamps, lifetimes).
    package var int: Int? {
        switch self {
        case .string(let s): return Int(s)  // some providers send expires_in as a string
        default: return wholeNumber
        }
    }
    /// A JSON number that is a whole number within a sane range (an id, a code), as an integer; nil for any other
    /// value, a string of digits included.
    package var wholeNumber: Int? {
        guard case .number(let d) = self, d.rounded() == d, d.magnitude < 1e15 else { return nil }
        return Int(d)
    }
    /// The elements, if this is an array.
    public var array: [JSONValue]? { if case .array(let a) = self { return a } else { return nil } }
}

/// RFC 8259 JSON to `JSONValue`, strictly (no comments, trailing commas, leading zeros or invalid UTF-8; at most
/// 512 levels deep). Written here rather than through Foundation's JSONDecoder, whose generic decoding looks
/// types and conformances up at run time: on `signin token`'s cached path that cost more than the rest of the
/// command's own work. Duplicate member names: the first one counts, as with Foundation's decoder before.
/// On failure it says where (a byte offset) and why, in words for a person editing a file (`JSONSyntax`).
package struct JSONParser {
    package struct Failure: Error, Equatable {
        package let offset: Int
        package let reason: String
    }

    package let bytes: [UInt8]
    package var i = 0
    /// A member name twice in one object is an error (a configuration a person edits), not "the first counts".
    package var refusingDuplicates = false

    package init(bytes: [UInt8], refusingDuplicates: Bool = false) {
        self.bytes = bytes
        self.refusingDuplicates = refusingDuplicates
    }

    /// The one value the text holds; throws where it stops being exactly one valid JSON value.
    package mutating func document() throws(Failure) -> JSONValue {
        skipSpace()
        let v = try value(depth: 0)
        skipSpace()
        guard i == bytes.count else { throw failure("unexpected text after the end of the JSON value") }
        return v
    }

    private func failure(_ reason: String, at offset: Int? = nil) -> Failure { Failure(offset: offset ?? i, reason: reason) }

    private var current: UInt8? { i < bytes.count ? bytes[i] : nil }

    private mutating func skipSpace() {
        while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x0A || bytes[i] == 0x0D || bytes[i] == 0x09 { i += 1 }
    }

    private mutating func expect(_ c: UInt8, _ what: String) throws(Failure) {
        guard current == c else { throw failure(current == nil ? "the text ends where \(what) was expected" : "expected \(what)") }
        i += 1
    }

    private mutating func value(depth: Int) throws(Failure) -> JSONValue {
        guard depth < 512 else { throw failure("nested too deeply") }
        switch current {
        case UInt8(ascii: "{"):
            i += 1
            var members: [String: JSONValue] = [:]
            skipSpace()
            if current == UInt8(ascii: "}") { i += 1; return .object(members) }
            while true {
                skipSpace()
                guard current == UInt8(ascii: "\"") else {
                    throw failure(current == nil ? "the text ends inside an object" : "expected a quoted member name (is there a trailing comma?)")
                }
                let nameOffset = i
                let name = try string()
                if refusingDuplicates && members[name] != nil { throw failure("the field \"\(name)\" appears twice in one object (which one is meant?)", at: nameOffset) }
                skipSpace()
                try expect(UInt8(ascii: ":"), "':' after the member name")
                skipSpace()
                let v = try value(depth: depth + 1)
                if members[name] == nil { members[name] = v }
                skipSpace()
                if current == UInt8(ascii: ",") { i += 1; continue }
                try expect(UInt8(ascii: "}"), "',' or '}' (is a comma missing?)")
                return .object(members)
            }
        case UInt8(ascii: "["):
            i += 1
            var items: [JSONValue] = []
            skipSpace()
            if current == UInt8(ascii: "]") { i += 1; return .array(items) }
            while true {
                skipSpace()
                items.append(try value(depth: depth + 1))
                skipSpace()
                if current == UInt8(ascii: ",") { i += 1; continue }
                try expect(UInt8(ascii: "]"), "',' or ']'")
                return .array(items)
            }
        case UInt8(ascii: "\""):
            return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case let c? where c == UInt8(ascii: "-") || isDigit(c):
            return try number()
        case nil:
            throw failure("the text ends where a value was expected")
        default:
            throw failure("expected a value (a string in double quotes, a number, true, false, null, an object or a list)")
        }
    }

    private mutating func literal(_ word: StaticString) throws(Failure) {
        for k in 0..<word.utf8CodeUnitCount {
            guard current == word.utf8Start[k] else { throw failure("expected \(word)") }
            i += 1
        }
    }

    private func isDigit(_ c: UInt8?) -> Bool { c.map { $0 >= 0x30 && $0 <= 0x39 } ?? false }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`, finite.
    private mutating func number() throws(Failure) -> JSONValue {
        let start = i
        let malformed = "a malformed number (JSON has no leading zeros, no trailing point, no NaN or infinity)"
        if current == UInt8(ascii: "-") { i += 1 }
        guard isDigit(current) else { throw failure(malformed) }
        if current == UInt8(ascii: "0") { i += 1 } else { while isDigit(current) { i += 1 } }
        if current == UInt8(ascii: ".") {
            i += 1
            guard isDigit(current) else { throw failure(malformed) }
            while isDigit(current) { i += 1 }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            i += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { i += 1 }
            guard isDigit(current) else { throw failure(malformed) }
            while isDigit(current) { i += 1 }
        }
        if isDigit(current) { throw failure(malformed) }  // a leading zero followed by more digits
        guard let d = Double(String(decoding: bytes[start..<i], as: UTF8.self)), d.isFinite else { throw failure(malformed, at: start) }
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

    /// A string at `"`: unterminated, a raw control character, a bad escape, a lone surrogate or invalid UTF-8
    /// are failures.
    private mutating func string() throws(Failure) -> String {
        let start = i
        i += 1
        var out: [UInt8] = []
        var runStart = i
        while i < bytes.count {
            let c = bytes[i]
            if c == UInt8(ascii: "\"") {
                out.append(contentsOf: bytes[runStart..<i])
                i += 1
                guard let s = String(validating: out, as: UTF8.self) else { throw failure("a string that is not valid UTF-8", at: start) }
                return s
            }
            if c < 0x20 { throw failure("a line break or control character inside a string (is a closing quote missing?)") }
            guard c == UInt8(ascii: "\\") else { i += 1; continue }
            out.append(contentsOf: bytes[runStart..<i])
            let escape = i
            guard i + 1 < bytes.count else { break }
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
                let bad = "a \\u escape that is not four hex digits naming a character (or a surrogate pair)"
                guard var scalar = hex(i) else { throw failure(bad, at: escape) }
                i += 4
                if (0xD800...0xDBFF).contains(scalar) {
                    guard i + 6 <= bytes.count, bytes[i] == UInt8(ascii: "\\"), bytes[i + 1] == UInt8(ascii: "u"),
                          let low = hex(i + 2), (0xDC00...0xDFFF).contains(low) else { throw failure(bad, at: escape) }
                    i += 6
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00...0xDFFF).contains(scalar) {
                    throw failure(bad, at: escape)
                }
                guard let u = Unicode.Scalar(scalar) else { throw failure(bad, at: escape) }
                out.append(contentsOf: UTF8.encode(u)!)
            default:
                throw failure("an unknown escape in a string (JSON has \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)", at: escape)
            }
            runStart = i
        }
        throw failure("the text ends inside a string (is a closing quote missing?)")
    }
}
