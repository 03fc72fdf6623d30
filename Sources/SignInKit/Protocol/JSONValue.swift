import FoundationEssentials

/// A JSON value of any shape, for provider documents whose members we read one by one.
enum JSONValue: Decodable, Sendable, Equatable {
    case null, bool(Bool), number(Double), string(String), array([JSONValue]), object([String: JSONValue])

    init(from decoder: Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { self = .null }
        else if let b = try? c.decode(Bool.self) { self = .bool(b) }
        else if let n = try? c.decode(Double.self) { self = .number(n) }
        else if let s = try? c.decode(String.self) { self = .string(s) }
        else if let a = try? c.decode([JSONValue].self) { self = .array(a) }
        else { self = .object(try c.decode([String: JSONValue].self)) }
    }

    /// Parses a JSON object; nil for anything else (arrays, scalars, invalid JSON, non-UTF-8).
    static func object(from data: Data) -> [String: JSONValue]? {
        guard !data.isEmpty, data.count <= 1 << 20, case .object(let o)? = try? JSONDecoder().decode(JSONValue.self, from: data) else { return nil }
        return o
    }

    var string: String? { if case .string(let s) = self { return s } else { return nil } }
    var bool: Bool? {
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
