import FoundationEssentials

/// Base64url without padding (RFC 4648 section 5), as JOSE and PKCE use it.
package enum Base64URL {
    package static func encode<D: Sequence>(_ bytes: D) -> String where D.Element == UInt8 {
        Data(bytes).base64EncodedString()
            .replacing("+", with: "-")
            .replacing("/", with: "_")
            .replacing("=", with: "")
    }

    /// Decodes strict base64url; returns nil for any character outside the alphabet or padding.
    package static func decode(_ string: Substring) -> Data? {
        var s = ""
        s.reserveCapacity(string.utf8.count + 3)
        for c in string.utf8 {
            switch c {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"):
                s.unicodeScalars.append(Unicode.Scalar(c))
            case UInt8(ascii: "-"): s.append("+")
            case UInt8(ascii: "_"): s.append("/")
            default: return nil
            }
        }
        switch s.utf8.count % 4 {
        case 0: break
        case 2: s += "=="
        case 3: s += "="
        default: return nil
        }
        return Data(base64Encoded: s)
    }

    package static func decode(_ string: String) -> Data? { decode(Substring(string)) }
}
