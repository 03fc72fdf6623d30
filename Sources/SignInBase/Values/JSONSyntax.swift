/// Where a JSON text first goes wrong, by line and column, so a person editing a configuration by hand learns where
/// to look (Foundation's decoder only says that it is not valid). The grammar is `JSONParser`'s: a text is refused
/// here exactly when the parser refuses it.
package enum JSONSyntax {
    package struct Problem: Error, Equatable {
        package let line: Int
        package let column: Int
        package let reason: String
    }

    package static func firstError(in bytes: [UInt8], refusingDuplicates: Bool = false) -> Problem? {
        var parser = JSONParser(bytes: bytes, refusingDuplicates: refusingDuplicates)
        do throws(JSONParser.Failure) {
            _ = try parser.document()
            return nil
        } catch {
            var line = 1, column = 1
            for b in bytes.prefix(error.offset) {
                if b == UInt8(ascii: "\n") { line += 1; column = 1 } else if b & 0xC0 != 0x80 { column += 1 }
            }
            return Problem(line: line, column: column, reason: error.reason)
        }
    }
}
