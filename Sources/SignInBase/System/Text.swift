// Text every room handles the same way: white space trimmed, and control characters kept off a terminal.

extension StringProtocol {
    /// The string without leading and trailing white space.
    package var trimmingWhitespace: String {
        // Index walking rather than reversed(): this runs on the cached path (the current-account pointer), where
        // instantiating the generic reversed views cost about 1 M instructions.
        var start = startIndex, end = endIndex
        while start < end, self[start].isWhitespace { start = index(after: start) }
        while end > start {
            let before = index(before: end)
            guard self[before].isWhitespace else { break }
            end = before
        }
        return String(self[start..<end])
    }
}

extension Unicode.Scalar {
    /// C0 controls (including CR, LF, TAB and ESC), DEL and C1 controls: what must never reach a terminal raw.
    package var isControl: Bool { value < 0x20 || (0x7F...0x9F).contains(value) }
}

extension String {
    /// This text with C0 and C1 control characters removed, safe to print on a terminal: a provider (or a forged
    /// callback) cannot move the cursor, recolour or rewrite lines with it.
    package var withoutControlCharacters: String {
        guard unicodeScalars.contains(where: { $0.isControl }) else { return self }
        var out = String.UnicodeScalarView()
        out.append(contentsOf: unicodeScalars.filter { !$0.isControl })
        return String(out)
    }
}
