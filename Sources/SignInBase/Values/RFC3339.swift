import FoundationEssentials

/// RFC 3339 timestamps as Google's APIs and AWS STS write them (`2026-12-03T10:00:00.123Z`).
package enum RFC3339 {
    /// The instant `s` names, to the second, or nil when it is not an RFC 3339 timestamp.
    package static func date(_ s: String) -> Date? {
        var text = s
        if let dot = text.firstIndex(of: ".") {
            // Drop the fraction: a token's expiry needs no more than seconds.
            let rest = text[text.index(after: dot)...]
            let zone = rest.drop { $0.isNumber }
            text = String(text[..<dot]) + zone
        }
        return try? Date(text, strategy: .iso8601)
    }
}
