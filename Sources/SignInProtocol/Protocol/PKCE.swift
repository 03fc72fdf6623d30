import SignInBase
import SignInTransport

/// Proof Key for Code Exchange (RFC 7636), S256 only: `plain` is never sent.
package struct PKCE: Sendable, CustomStringConvertible {
    /// 43 characters of base64url from 32 random bytes (256 bits).
    package let verifier: String
    /// `BASE64URL(SHA256(verifier))`.
    package var challenge: String { PKCE.challenge(for: verifier) }
    /// The only method signin sends.
    package static let method = "S256"

    /// A fresh verifier from OpenSSL's CSPRNG.
    init() throws(SignInError) {
        verifier = Base64URL.encode(try Crypto.randomBytes(32))
    }

    /// A known verifier (tests, RFC 7636 appendix B).
    init(verifier: String) { self.verifier = verifier }

    /// Never the verifier.
    package var description: String { "PKCE(S256)" }

    /// The S256 challenge for a verifier.
    package static func challenge(for verifier: String) -> String {
        Base64URL.encode(Crypto.sha256(Array(verifier.utf8)))
    }
}
