/// Finds where a JSON text first goes wrong, by line and column, so a person editing a configuration by hand
/// learns where to look (Foundation's decoder only says that it is not valid).
enum JSONSyntax {
    struct Problem: Error, Equatable {
        let line: Int
        let column: Int
        let reason: String
    }

    static func firstError(in bytes: [UInt8]) -> Problem? {
        var p = Parser(bytes: bytes)
        do throws(Problem) {
            p.skipSpace()
            try p.value(depth: 0)
            p.skipSpace()
            if p.i < bytes.count { throw p.problem("unexpected text after the end of the JSON value") }
            return nil
        } catch {
            return error
        }
    }

    private struct Parser {
        let bytes: [UInt8]
        var i = 0

        func problem(_ reason: String) -> Problem {
            var line = 1, column = 1
            for b in bytes.prefix(i) {
                if b == UInt8(ascii: "\n") { line += 1; column = 1 } else if b & 0xC0 != 0x80 { column += 1 }
            }
            return Problem(line: line, column: column, reason: reason)
        }

        var current: UInt8? { i < bytes.count ? bytes[i] : nil }

        mutating func skipSpace() {
            while let c = current, c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 { i += 1 }
        }

        mutating func expect(_ c: Character, _ what: String) throws(Problem) {
            guard current == c.asciiValue else { throw problem(current == nil ? "the text ends where \(what) was expected" : "expected \(what)") }
            i += 1
        }

        mutating func value(depth: Int) throws(Problem) {
            guard depth < 512 else { throw problem("nested too deeply") }
            switch current {
            case UInt8(ascii: "{"):
                i += 1
                skipSpace()
                if current == UInt8(ascii: "}") { i += 1; return }
                while true {
                    skipSpace()
                    guard current == UInt8(ascii: "\"") else { throw problem(current == nil ? "the text ends inside an object" : "expected a quoted member name (is there a trailing comma?)") }
                    try string()
                    skipSpace()
                    try expect(":", "':' after the member name")
                    skipSpace()
                    try value(depth: depth + 1)
                    skipSpace()
                    if current == UInt8(ascii: ",") { i += 1; continue }
                    try expect("}", "',' or '}' (is a comma missing?)")
                    return
                }
            case UInt8(ascii: "["):
                i += 1
                skipSpace()
                if current == UInt8(ascii: "]") { i += 1; return }
                while true {
                    skipSpace()
                    try value(depth: depth + 1)
                    skipSpace()
                    if current == UInt8(ascii: ",") { i += 1; continue }
                    try expect("]", "',' or ']'")
                    return
                }
            case UInt8(ascii: "\""):
                try string()
            case UInt8(ascii: "t"): try literal("true")
            case UInt8(ascii: "f"): try literal("false")
            case UInt8(ascii: "n"): try literal("null")
            case let c? where c == UInt8(ascii: "-") || (c >= 0x30 && c <= 0x39):
                i += 1
                while let d = current, (d >= 0x30 && d <= 0x39) || [UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"), UInt8(ascii: "+"), UInt8(ascii: "-")].contains(d) { i += 1 }
            case nil:
                throw problem("the text ends where a value was expected")
            default:
                throw problem("expected a value (a string in double quotes, a number, true, false, null, an object or a list)")
            }
        }

        mutating func literal(_ word: String) throws(Problem) {
            for c in word.utf8 {
                guard current == c else { throw problem("expected \(word)") }
                i += 1
            }
        }

        mutating func string() throws(Problem) {
            i += 1
            while let c = current {
                if c == UInt8(ascii: "\"") { i += 1; return }
                if c < 0x20 { throw problem("a line break or control character inside a string (is a closing quote missing?)") }
                i += c == UInt8(ascii: "\\") ? 2 : 1
            }
            throw problem("the text ends inside a string (is a closing quote missing?)")
        }
    }
}
