import SignInBase
import SignInTransport
import FoundationEssentials

/// Demonstrating Proof of Possession (RFC 9449): a grant bound to a key the client holds. Every request to the
/// token endpoint (and revocation) carries a proof, a JWT signed by the key for that method and URL; the provider
/// binds the refresh token (and the access token, `cnf.jkt`) to the key's thumbprint, so a token copied without
/// the key is useless.
package enum DPoP {
    /// The name discovery lists supported algorithms under, and the one signin signs with.
    package static let discoveryMember = "dpop_signing_alg_values_supported"
    package static let algorithm = "ES256"
    /// The OAuth error a server answers when it wants a nonce of its own in the proof (RFC 9449 8).
    static let useNonceError = "use_dpop_nonce"

    /// The public key as a JWK with only its required members, in lexicographic order (RFC 7638 3).
    static func jwk(_ key: ProofKey) -> String {
        "{\"crv\":\"P-256\",\"kty\":\"EC\",\"x\":\"\(Base64URL.encode(key.x))\",\"y\":\"\(Base64URL.encode(key.y))\"}"
    }

    /// The key's JWK SHA-256 thumbprint (RFC 7638), what the provider binds the grant to (`cnf.jkt`).
    static func thumbprint(_ key: ProofKey) -> String { Base64URL.encode(Crypto.sha256(Array(jwk(key).utf8))) }

    /// The target URI as a proof names it: without query and fragment (RFC 9449 4.2).
    static func htu(_ url: String) -> String {
        var s = Substring(url)
        if let i = s.firstIndex(where: { $0 == "?" || $0 == "#" }) { s = s[..<i] }
        return String(s)
    }

    /// A proof for one request: `method` and `url` of the request, the server's `nonce` when it gave one, and the
    /// access token when the request presents one to a resource (`ath`, RFC 9449 4.2).
    package static func proof(_ key: ProofKey, method: String, url: String, nonce: String? = nil, accessToken: String? = nil,
                      now: Date = Date()) throws(SignInError) -> String {
        let header = "{\"alg\":\"\(algorithm)\",\"jwk\":\(jwk(key)),\"typ\":\"dpop+jwt\"}"
        var claims: [String: JSONValueOut] = [
            "jti": .string(Base64URL.encode(try Crypto.randomBytes(16))),
            "htm": .string(method.uppercased()),
            "htu": .string(htu(url)),
            "iat": .int(Int(now.timeIntervalSince1970)),
        ]
        if let nonce { claims["nonce"] = .string(nonce) }
        if let accessToken { claims["ath"] = .string(Base64URL.encode(Crypto.sha256(Array(accessToken.utf8)))) }
        let input = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(JSONValueOut.object(claims).text.utf8))
        return input + "." + Base64URL.encode(try key.sign(Array(input.utf8)))
    }
}
