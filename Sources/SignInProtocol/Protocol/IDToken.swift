import SignInBase
import SignInTransport
import FoundationEssentials

/// An OpenID Connect ID token (a JWS), verified before anything in it is believed.
package struct IDToken: Sendable {
    package let raw: String
    package let claims: [String: JSONValue]
    package let header: [String: JSONValue]

    package var subject: String { claims["sub"]?.string ?? "" }
    package var expiry: Date? { claims["exp"]?.int.map { Date(timeIntervalSince1970: TimeInterval($0)) } }

    /// What a verification checks the claims against.
    package struct Expectations {
        package var issuer: String
        package var clientID: String
        package var nonce: String?
        /// The configuration's sections, each with its own claims to check (Google's `hd`).
        package var sections: [any ConfigurationSection] = []
        /// The provider's rules, for the other spellings of its issuer its tokens may use (nil: exactly `issuer`).
        package var issuerRules: ProviderRules?
        package var now: Date = Date()
        /// Clock skew tolerated on `exp` and `iat`.
        var skew: TimeInterval = 300

        package init(issuer: String, clientID: String, nonce: String? = nil, now: Date = Date(), skew: TimeInterval = 300) {
            self.issuer = issuer
            self.clientID = clientID
            self.nonce = nonce
            self.now = now
            self.skew = skew
        }
    }

    /// Splits and decodes a compact JWS without trusting it.
    package static func decode(_ raw: String) throws(SignInError) -> IDToken {
        guard raw.utf8.count <= 64 * 1024 else { throw .invalidIDToken(reason: "too large") }
        let parts = raw.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw .invalidIDToken(reason: "not a compact JWS (expected three parts)") }
        guard let h = Base64URL.decode(parts[0]), let header = JSONValue.object(from: h) else { throw .invalidIDToken(reason: "header is not base64url JSON") }
        guard let p = Base64URL.decode(parts[1]), let claims = JSONValue.object(from: p) else { throw .invalidIDToken(reason: "payload is not base64url JSON") }
        return IDToken(raw: raw, claims: claims, header: header)
    }

    /// Checks the signature with `jwks` (calling `refetch` once when the key is unknown) and then the claims.
    package static func verify(_ raw: String, jwks: JWKS, refetch: () throws(SignInError) -> JWKS, expect: Expectations) throws(SignInError) -> IDToken {
        let token = try decode(raw)
        guard let alg = token.header["alg"]?.string else { throw .invalidIDToken(reason: "no \"alg\" in the header") }
        guard alg == "RS256" || alg == "ES256" else { throw .invalidIDToken(reason: "algorithm \"\(alg)\" is not accepted (RS256 or ES256)") }
        if let crit = token.header["crit"], crit != .null { throw .invalidIDToken(reason: "unsupported critical header") }
        let kid = token.header["kid"]?.string
        let parts = raw.split(separator: ".", omittingEmptySubsequences: false)
        guard let sig = Base64URL.decode(parts[2]) else { throw .invalidIDToken(reason: "signature is not base64url") }
        let signingInput = Array(raw.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
        var key = jwks.key(kid: kid, alg: alg)
        if key == nil { key = try refetch().key(kid: kid, alg: alg) }  // keys rotate: look once more
        guard let key else { throw .invalidIDToken(reason: "no \(alg) key \(kid.map { "with kid \"\($0)\" " } ?? "")in the provider's JWKS") }
        guard key.verify(signature: Array(sig), message: signingInput) else { throw .invalidIDToken(reason: "signature does not verify") }
        try token.checkClaims(expect)
        return token
    }

    package func checkClaims(_ e: Expectations) throws(SignInError) {
        let iss = claims["iss"]?.string ?? ""
        guard Issuer.same(iss, e.issuer, rules: e.issuerRules) else { throw .invalidIDToken(reason: "issued by \"\(iss)\", expected \"\(e.issuer)\"") }
        var audiences: [String] = []
        if let a = claims["aud"]?.string { audiences = [a] } else if let list = claims["aud"]?.array { audiences = list.compactMap(\.string) }
        guard audiences.contains(e.clientID) else { throw .invalidIDToken(reason: "issued for another client (aud does not contain this client ID)") }
        // OpenID Core 3.1.3.7 step 3: other audiences are acceptable only if all are trusted, and this client trusts
        // none but itself, whatever azp says (a refreshed token could otherwise widen its audience, Core 12.2).
        if audiences.count > 1 || claims["aud"]?.array?.count ?? 1 > 1 {
            throw .invalidIDToken(reason: "several audiences (aud lists another client beside this one)")
        }
        if let azp = claims["azp"] {
            guard let party = azp.string else { throw .invalidIDToken(reason: "authorized party (azp) is not a string") }
            guard party == e.clientID else { throw .invalidIDToken(reason: "authorized party (azp) is another client") }
        }
        guard !subject.isEmpty else { throw .invalidIDToken(reason: "no subject (sub)") }
        guard let exp = claims["exp"]?.int else { throw .invalidIDToken(reason: "no expiry (exp)") }
        let now = e.now.timeIntervalSince1970
        guard TimeInterval(exp) + e.skew > now else {
            throw .invalidIDToken(reason: "expired at \(Date(timeIntervalSince1970: TimeInterval(exp))) (is this computer's clock right? it says \(e.now))")
        }
        guard let iat = claims["iat"]?.int else { throw .invalidIDToken(reason: "no issue time (iat)") }
        guard TimeInterval(iat) - e.skew <= now else {
            throw .invalidIDToken(reason: "issued in the future (\(Date(timeIntervalSince1970: TimeInterval(iat)))); this computer's clock says \(e.now), more than \(Int(e.skew)) s behind")
        }
        if let nonce = e.nonce {
            guard let n = claims["nonce"]?.string, Crypto.constantTimeEqual(n, nonce) else { throw .invalidIDToken(reason: "nonce does not match this sign-in (replayed token?)") }
        }
        for section in e.sections {
            if let problem = section.idTokenProblem(claims) { throw .invalidIDToken(reason: problem) }
        }
    }

    package var profile: SignInProfile { SignInProfile(claims: claims) }
}
