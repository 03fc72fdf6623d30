/// Lowercase hexadecimal, two digits a byte: random names (keys, temporary files) and store entry names.
package enum Hex {
    /// Bytes in an array, the usual case: not generic, because a generic function called from another target runs
    /// unspecialised there and looks its associated types up at run time (about 40 K instructions a call on the
    /// cached path, which names its store files with this).
    package static func encode(_ bytes: [UInt8]) -> String { encode(bytes[...]) }

    package static func encode<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        let digits: [UInt8] = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// A 64-bit value as 16 digits, most significant first.
    package static func encode(_ value: UInt64) -> String {
        encode((0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * $0)) })
    }
}
