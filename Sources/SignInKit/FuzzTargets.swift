import FoundationEssentials

/// Entry points for the libFuzzer targets in `Fuzz/`: every parser that reads bytes from outside
/// (the loopback listener, provider answers, configuration). Each must return, never crash or hang.
@_spi(Fuzzing) public enum FuzzTargets {
    /// Bytes as a local client might send them to the listener.
    public static func listener(_ bytes: [UInt8]) {
        if case .request(let r) = HTTPRequestHead.parse(bytes) {
            _ = EndpointURL.problem(String(decoding: bytes, as: UTF8.self))
            let v = CallbackValidator(state: "expected-state", issuer: "https://accounts.google.com", issuerRequired: bytes.first == 0x41)
            _ = v.check(query: r.query)
            _ = v.checkPasted(r.path + "?" + r.query)
        }
    }

    /// Bytes as a provider might answer: token responses, JWKS, ID tokens, discovery, configuration.
    public static func providerAnswer(_ bytes: [UInt8]) {
        let data = Data(bytes)
        _ = JSONValue.object(from: data)
        _ = try? TokenResponse.parse(HTTPResponse(status: 200, body: data), endpoint: "fuzz")
        _ = OAuthError.from(HTTPResponse(status: 400, body: data), endpoint: "fuzz")
        let jwks = try? JWKS.parse(data, endpoint: "fuzz")
        _ = try? SignInConfiguration.parse(data, sourcePath: "fuzz")
        let text = String(decoding: bytes, as: UTF8.self)
        let expect = IDToken.Expectations(issuer: "https://issuer.example", clientID: "c", nonce: "n", hostedDomain: nil)
        _ = try? IDToken.verify(text, jwks: jwks ?? JWKS(keys: []), refetch: { () throws(SignInError) -> JWKS in JWKS(keys: []) }, expect: expect)
        if let t = try? IDToken.decode(text) { _ = try? t.checkClaims(expect) }
    }
}
