import SignInBase
import SignInProtocol

/// How the store's files are named.
///
/// Format 3 (this signin): a configuration `C` and an account `A` are 128-bit SipHash tags under a naming key
/// derived from the store key, so a copy of the folder without the key confirms no guessed account, client or
/// provider; moving the key (which makes a new one) renames every file. Format 2 (legacy, carried over on first
/// use): unkeyed FNV-1a hashes of the same text, which anyone can recompute.
package struct StoreNames: Equatable {
    private let nameKey: [UInt8]

    /// The names under `storeKey` (32 bytes).
    init(storeKey: [UInt8]) {
        // A subkey, so the AES key itself is never a SipHash key.
        nameKey = SipHash.hash128(key: Array(storeKey[0..<16]), Array("signin-store-names-v3\u{0}".utf8) + storeKey[16..<32])
    }

    /// The file prefix of one configuration (issuer and client ID).
    package func configuration(issuer: String, clientID: String) -> String {
        Hex.encode(SipHash.hash128(key: nameKey, Array("C\u{0}\(issuer)\u{0}\(clientID)".utf8)))
    }

    /// The file part of one account of that configuration.
    package func account(issuer: String, clientID: String, subject: String) -> String {
        Hex.encode(SipHash.hash128(key: nameKey, Array("A\u{0}\(issuer)\u{0}\(clientID)\u{0}\(subject)".utf8)))
    }

    /// Format 2's name of a configuration.
    static func legacyConfiguration(issuer: String, clientID: String) -> String { FNV1a.twoWay("\(issuer)\u{0}\(clientID)") }
    /// Format 2's name of an account.
    static func legacyAccount(subject: String) -> String { FNV1a.twoWay(subject) }

    /// Whether `name` is a format 2 or 3 entry file name, `C.A.cred`: returns `C` and `A`.
    static func parseEntry(_ name: String) -> (configuration: String, account: String)? {
        guard name.utf8.count == 32 + 1 + 32 + 5, name.hasSuffix(".cred") else { return nil }
        let u = Array(name.utf8)
        guard u[32] == UInt8(ascii: "."), isName(u[0..<32]), isName(u[33..<65]) else { return nil }
        return (String(decoding: u[0..<32], as: UTF8.self), String(decoding: u[33..<65], as: UTF8.self))
    }

    /// Whether `bytes` spell one of the store's names: 32 lowercase hex digits (a configuration's or an account's,
    /// format 2 or 3, and a record's).
    static func isName(_ bytes: some Collection<UInt8>) -> Bool {
        bytes.count == 32 && bytes.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }
}
