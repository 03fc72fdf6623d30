/// Lowercase hexadecimal, two digits a byte: random names (keys, temporary files) and store entry names.
package enum Hex {
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
