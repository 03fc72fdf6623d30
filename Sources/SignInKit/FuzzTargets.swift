import SignInBase
import SignInProtocol
import SignInStorage
import SignInGrant
import SignInTransport
import SignInAWS
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
        let expect = IDToken.Expectations(issuer: "https://issuer.example", clientID: "c", nonce: "n")
        _ = try? IDToken.verify(text, jwks: jwks ?? JWKS(keys: []), refetch: { () throws(SignInError) -> JWKS in JWKS(keys: []) }, expect: expect)
        if let t = try? IDToken.decode(text) { _ = try? t.checkClaims(expect) }
        // A form-encoded token answer, an API's challenge, a profile endpoint's answer (plain OAuth 2.0 servers).
        _ = try? TokenResponse.parse(HTTPResponse(status: 200, body: data, headers: ["content-type": "application/x-www-form-urlencoded"]), endpoint: "fuzz")
        _ = WWWAuthenticate(text).tokenChallenge?.scopes
        if let o = JSONValue.object(from: data) { _ = SignInProfile(profileEndpoint: o) }
        _ = EndpointURL.normalized(text)
    }

    /// Bytes as a cloud or an extension of OAuth might answer: AWS STS's XML (credentials or a refusal), Google STS's
    /// and IAM's JSON, a pushed authorization request's answer, a DPoP nonce challenge, `Retry-After`.
    public static func cloudAnswer(_ bytes: [UInt8]) {
        let data = Data(bytes)
        let status = bytes.first.map { [200, 201, 400, 401, 403, 429][Int($0) % 6] } ?? 200
        let text = String(decoding: bytes, as: UTF8.self)
        let headers = ["dpop-nonce": String(text.prefix(64)), "www-authenticate": "DPoP error=\"use_dpop_nonce\"", "retry-after": String(text.prefix(40))]
        let r = HTTPResponse(status: status, body: data, headers: headers)
        AWSFamily.readAnswer(r)
        _ = try? TokenResponse.parse(r, endpoint: "fuzz")
        _ = try? TokenClient.requestURI(from: r, endpoint: "fuzz")
        _ = TokenClient.nonceChallenge(r)
        _ = OAuthError.retryAfterSeconds(String(text.prefix(40)))
        _ = OAuthError.from(r, endpoint: "fuzz")
    }

    /// Bytes as the agent's socket might carry them: an answer to the client, a token request's query to the agent.
    public static func agentMessage(_ bytes: [UInt8]) {
        let client = AgentClient(socketPath: "/nonexistent")
        if let a = try? client.parse(bytes) {
            _ = client.failure(a)
            _ = AgentProtocol.TokenAnswer(json: a.object)
            _ = AgentProtocol.Hello(json: a.object)
        }
        let text = String(decoding: bytes, as: UTF8.self)
        if let o = JSONValue.object(from: Data(bytes)) { _ = try? ProtectedResourceMetadata.parse(o, for: "https://api.example/", endpoint: "fuzz") }
        _ = WWWAuthenticate(String(text.prefix(512))).tokenChallenge?.resourceMetadata
        if let q = FormEncoding.decode(Substring(text)) { _ = AgentProtocol.tokenRequest(q) }
        if case .request(let head) = HTTPRequestHead.parse(bytes), let q = FormEncoding.decode(Substring(head.query)) { _ = AgentProtocol.tokenRequest(q) }
    }

    /// Bytes as signin's own files might hold them after damage or tampering: `key.json`, an entry, a decrypted
    /// entry's JSON, a key move's journal.
    public static func storedFile(_ bytes: [UInt8]) {
        let data = Data(bytes)
        if let o = JSONValue.object(from: data) {
            _ = StoreKey.Descriptor(json: o)
            _ = StoredCredentials(json: o)
            _ = KeyMoveJournal(json: o)
        }
        _ = try? EntryFile.parse(bytes)
    }
}

