/// FNV-1a (Fowler, Noll, Vo), 64 bits: an unkeyed hash, which anyone can recompute. The store named its files with it
/// before format 3 (SipHash under a key); signin still computes those names to find and carry over such a store.
package enum FNV1a {
    /// Two 64-bit FNV-1a hashes of `text`'s UTF-8, the bytes forward and then backward from two offset bases, as 32
    /// hex digits: the store's format 2 names.
    package static func twoWay(_ text: String) -> String {
        let input = Array(text.utf8)
        var forward: UInt64 = 0xcbf2_9ce4_8422_2325, backward: UInt64 = 0x8422_2325_cbf2_9ce4
        for b in input {
            forward = (forward ^ UInt64(b)) &* 0x0000_0100_0000_01b3
        }
        var i = input.count
        while i > 0 {
            i -= 1
            backward = (backward ^ UInt64(input[i])) &* 0x0000_0100_0000_01b3
        }
        return Hex.encode(forward) + Hex.encode(backward)
    }
}
