import SignInBase
import SignInProtocol

/// The byte layout of one encrypted store file, used by both reading and writing:
///
/// | offset | length | content |
/// |---|---|---|
/// | 0 | 4 | magic `SGNI` |
/// | 4 | 1 | format version (1: one account per issuer and client; 2: one file per account; 3: keyed names) |
/// | 5 | 12 | AES-GCM nonce, fresh for every write |
/// | 17 | 16 | GCM tag |
/// | 33 | rest | ciphertext of the JSON credentials |
///
/// The associated data (`aad`) binds a version 3 file to its own name (`C.A`, which the content's issuer,
/// client and `sub` must give again), and a version 1 or 2 file to its issuer and client; either way a file
/// copied over another account's is refused.
package struct EntryFile {
    static let magic: [UInt8] = Array("SGNI".utf8)
    static let versionOffset = 4
    static let nonceOffset = 5
    static let tagOffset = 17
    static let ciphertextOffset = 33

    package let version: UInt8
    let sealed: Crypto.Sealed

    static func aad(configuration: String, account: String) -> [UInt8] {
        Array("signin-store-v3\u{0}\(configuration).\(account)".utf8)
    }

    static func aad(version: UInt8, issuer: String, clientID: String) -> [UInt8] {
        Array("signin-store-v\(version)\u{0}\(issuer)\u{0}\(clientID)".utf8)
    }

    package enum Problem: Error { case notAnEntry, unknownVersion(UInt8) }

    package static func parse(_ bytes: [UInt8]) throws(Problem) -> EntryFile {
        guard bytes.count >= ciphertextOffset, Array(bytes[0..<versionOffset]) == magic else { throw .notAnEntry }
        let version = bytes[versionOffset]
        guard (1...3).contains(version) else { throw .unknownVersion(version) }
        return EntryFile(version: version, sealed: Crypto.Sealed(nonce: Array(bytes[nonceOffset..<tagOffset]),
                                                                  ciphertext: Array(bytes[ciphertextOffset...]),
                                                                  tag: Array(bytes[tagOffset..<ciphertextOffset])))
    }

    package var bytes: [UInt8] { Self.magic + [version] + sealed.nonce + sealed.tag + sealed.ciphertext }
}
