/// SipHash-2-4 with a 128-bit output (Aumasson and Bernstein): a keyed pseudorandom function for short inputs,
/// written here so that naming the store's files costs no OpenSSL initialisation on the cached path.
package enum SipHash {
    /// The 16-byte tag of `message` under the 16-byte `key`.
    package static func hash128(key: [UInt8], _ message: [UInt8]) -> [UInt8] {
        precondition(key.count == 16)
        func word(_ b: ArraySlice<UInt8>) -> UInt64 {
            var w: UInt64 = 0
            for (i, byte) in b.enumerated() { w |= UInt64(byte) << (8 * UInt64(i)) }
            return w
        }
        let k0 = word(key[0..<8]), k1 = word(key[8..<16])
        var v0: UInt64 = 0x736f_6d65_7073_6575 ^ k0
        var v1: UInt64 = 0x646f_7261_6e64_6f6d ^ k1 ^ 0xee
        var v2: UInt64 = 0x6c79_6765_6e65_7261 ^ k0
        var v3: UInt64 = 0x7465_6462_7974_6573 ^ k1
        func rotl(_ x: UInt64, _ b: UInt64) -> UInt64 { (x << b) | (x >> (64 - b)) }
        func round() {
            v0 = v0 &+ v1; v1 = rotl(v1, 13); v1 ^= v0; v0 = rotl(v0, 32)
            v2 = v2 &+ v3; v3 = rotl(v3, 16); v3 ^= v2
            v0 = v0 &+ v3; v3 = rotl(v3, 21); v3 ^= v0
            v2 = v2 &+ v1; v1 = rotl(v1, 17); v1 ^= v2; v2 = rotl(v2, 32)
        }
        let full = message.count / 8 * 8
        var i = 0
        while i < full {
            let m = word(message[i..<(i + 8)])
            v3 ^= m
            round(); round()
            v0 ^= m
            i += 8
        }
        var last = UInt64(truncatingIfNeeded: message.count) << 56
        last |= word(message[full...])
        v3 ^= last
        round(); round()
        v0 ^= last
        v2 ^= 0xee
        round(); round(); round(); round()
        let first = v0 ^ v1 ^ v2 ^ v3
        v1 ^= 0xdd
        round(); round(); round(); round()
        let second = v0 ^ v1 ^ v2 ^ v3
        return (0..<8).map { UInt8(truncatingIfNeeded: first >> (8 * UInt64($0))) } + (0..<8).map { UInt8(truncatingIfNeeded: second >> (8 * UInt64($0))) }
    }
}
