import SignInBase
import SignInTransport
import FoundationEssentials

/// A JSON Web Key Set (RFC 7517): the provider's public keys for ID token signatures.
package struct JWKS: Sendable {
    package struct Key: Sendable {
        let kid: String?
        let alg: String?
        package let key: VerificationKey
    }
    package let keys: [Key]

    /// Parses a key set, keeping the RSA and P-256 signing keys it can use and skipping others.
    package static func parse(_ data: Data, endpoint: String) throws(SignInError) -> JWKS {
        guard let o = JSONValue.object(from: data), let list = o["keys"]?.array else {
            throw .providerError(endpoint: endpoint, code: "invalid_response", detail: "not a JSON Web Key Set")
        }
        var keys: [Key] = []
        for case .object(let k) in list.prefix(100) {
            if let use = k["use"]?.string, use != "sig" { continue }
            func b64(_ name: String) -> [UInt8]? { k[name]?.string.flatMap { Base64URL.decode($0) }.map { Array($0) } }
            var made: VerificationKey?
            switch k["kty"]?.string {
            case "RSA":
                if let n = b64("n"), let e = b64("e") { made = VerificationKey.rsa(n: Array(n.drop(while: { $0 == 0 })), e: e) }
            case "EC":
                if k["crv"]?.string == "P-256", let x = b64("x"), let y = b64("y") { made = VerificationKey.p256(x: x, y: y) }
            default: break
            }
            if let made { keys.append(Key(kid: k["kid"]?.string, alg: k["alg"]?.string, key: made)) }
        }
        return JWKS(keys: keys)
    }

    package static func fetch(_ url: String, http: HTTPClient) throws(SignInError) -> JWKS {
        let endpoint = "JWKS endpoint (\(url))"
        let r = try http.get(url, endpoint: endpoint)
        guard r.status == 200 else { throw .providerError(endpoint: endpoint, code: "http_\(r.status)", detail: nil) }
        return try parse(r.body, endpoint: endpoint)
    }

    /// The key for `kid`, or the only key when the token names none.
    package func key(kid: String?, alg: String) -> VerificationKey? {
        let wanted: VerificationKey.Kind = alg == "RS256" ? .rsa : .ecP256
        let usable = keys.filter { $0.key.kind == wanted && ($0.alg == nil || $0.alg == alg) }
        if let kid { return usable.first { $0.kid == kid }?.key }
        return usable.count == 1 ? usable[0].key : nil
    }

    package init(keys: [Key]) {
        self.keys = keys
    }
}
