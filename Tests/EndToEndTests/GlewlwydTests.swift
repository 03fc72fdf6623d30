import Foundation
import Testing

/// signin against glewlwyd, a real OpenID provider (Debian's) that offers DPoP and pushed authorization requests:
/// its discovery lists both, so a sign-in pushes its request and binds the grant to a key, and glewlwyd checks
/// the proofs its own way (its nonce, its replay cache, its `cnf.jkt`).
@Suite struct GlewlwydTests {
    static let plain = Result { try Provider(script: "glewlwyd_provider.py").finishingWithTheTestProcess() }
    static let withNonce = Result { try Provider(script: "glewlwyd_provider.py", environment: ["GLEWLWYD_DPOP_NONCE": "1"]).finishingWithTheTestProcess() }

    static let withResources = Result { try Provider(script: "glewlwyd_provider.py", environment: ["GLEWLWYD_RESOURCES": "https://orders.example.test/,https://billing.example.test/api"]).finishingWithTheTestProcess() }

    /// glewlwyd's resource indicators (RFC 8707). Both resources asked at sign-in; a refresh naming one
    /// answers a token whose `aud` is that resource (glewlwyd's access tokens are JWTs), kept for the next call; a
    /// resource glewlwyd does not serve is `invalid_target`: exit 7, nothing stored.
    @Test func glewlwydIssuesATokenForEachResourceAndRefusesAnother() throws {
        if let reason = Self.available { Issue.record("not run, so failed: \(reason)"); return }
        let p = try Self.withResources.get()
        let resources = ["https://orders.example.test/", "https://billing.example.test/api"]
        let box = try sandbox(p, secret: "glewlwyd-secret-3", extra: ["resources": resources, "dpop": "never", "pushed_authorization": "never"])
        let login = try box.signin("login")
        try #require(login.status == 0, "\(login.stderr)")
        for resource in resources {
            let r = try box.signin("token", "--resource", resource)
            #expect(r.status == 0, "\(r.stderr)")
            let token = r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            let payload = token.split(separator: ".").dropFirst().first.map(String.init) ?? ""
            var b64 = payload.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            while b64.count % 4 != 0 { b64 += "=" }
            let claims = Data(base64Encoded: b64).flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] } ?? [:]
            let aud = claims["aud"] as? String ?? (claims["aud"] as? [String])?.joined(separator: " ") ?? ""
            #expect(aud == resource, "glewlwyd's token is for \(resource): \(claims)")
            #expect(try box.signin("token", "--resource", resource).stdout.trimmingCharacters(in: .whitespacesAndNewlines) == token, "the second call from the cache")
        }
        let before = box.storeSnapshot()
        // Listed in the configuration after the sign-in: asked for at glewlwyd, which refuses it.
        try box.editConfig { $0["resources"] = resources + ["https://elsewhere.example.test/"] }
        let refused = try box.signin("token", "--resource", "https://elsewhere.example.test/")
        #expect(refused.status == 7 && refused.stderr.contains("elsewhere.example.test"), "\(refused.status) \(refused.stderr)")
        #expect(box.storeSnapshot() == before)
        #expect(try box.signin("token", "--force-refresh").status == 0, "the grant still refreshes")
    }

    static var available: String? {
        FileManager.default.isExecutableFile(atPath: "/usr/bin/glewlwyd") ? nil : "glewlwyd is not installed (scripts/setup --tests installs it)"
    }

    /// A sandbox whose client glewlwyd knows: glewlwyd matches the redirect URI exactly, port included, so the
    /// loopback port is one the OS just handed out and the configuration names it.
    func sandbox(_ p: Provider, secret: String? = nil, extra: [String: Any] = [:]) throws -> Sandbox {
        let port = try freeLoopbackPort()
        let clientID = "signin-\(UUID().uuidString.prefix(8))"
        var body: [String: Any] = ["client_id": clientID, "redirect_uri": "http://127.0.0.1:\(port)/callback"]
        if let secret { body["client_secret"] = secret }
        let control = try #require(p.readyWords.first.flatMap { Int($0) })
        let r = try Subprocess.run("/usr/bin/curl", ["-sS", "--fail", "--max-time", "10", "--data-binary", "@-", "http://127.0.0.1:\(control)/client"],
                                   stdin: try JSONSerialization.data(withJSONObject: body))
        try #require(r.status == 0, "registering \(clientID): \(r.stderr)")
        var settings: [String: Any] = ["scopes": ["openid"], "redirect_port": port]
        settings.merge(extra) { $1 }
        let box = try Sandbox(issuer: p.issuer + "/api/oidc", clientID: clientID, secret: secret, extra: settings)
        box.environment["BROWSER"] = "\(Paths.python) \(Paths.providers.appendingPathComponent("glewlwyd_browser.py").path)"
        return box
    }

    @Test func aSignInIsPushedAndBoundToTheKeyAndGlewlwydTakesTheProofs() throws {
        if let reason = Self.available { Issue.record("not run, so failed: \(reason)"); return }
        let p = try Self.plain.get()
        let box = try sandbox(p, secret: "glewlwyd-secret-1")
        var r = try box.signin("login")
        #expect(r.status == 0, "\(r.stderr)")
        let log = (try? String(contentsOfFile: box.standinLog, encoding: .utf8)) ?? ""
        #expect(log.contains("request_uri=urn%3Aietf%3Aparams%3Aoauth%3Arequest_uri"), "the browser opened with a pushed request: \(log)")
        r = try box.signin("token", "--json")
        #expect(r.stdout.contains(#""token_type":"DPoP""#), "\(r.stdout)\(r.stderr)")
        let token = try box.signin("token").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let userinfo = p.issuer + "/api/oidc/userinfo"
        let proof = try box.signin("dpop-proof", "--url", userinfo).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try httpStatus(["-H", "Authorization: DPoP \(token)", "-H", "DPoP: \(proof)", userinfo]) == "200")
        #expect(try httpStatus(["-H", "Authorization: Bearer \(token)", userinfo]) == "401", "glewlwyd refuses the bound token as a bearer token")
        #expect(try httpStatus(["-H", "Authorization: DPoP \(token)", "-H", "DPoP: \(proof)", userinfo]) == "401", "and a replayed proof")
        r = try box.signin("token", "--force-refresh")
        #expect(r.status == 0 && r.stdout.trimmingCharacters(in: .whitespacesAndNewlines) != token, "\(r.stderr)")
        r = try box.signin("logout", "--revoke")
        #expect(r.status == 0, "revoked with a proof: \(r.stderr)")
    }

    @Test func glewlwydsNonceIsAnsweredAndBearerStaysAvailable() throws {
        if let reason = Self.available { Issue.record("not run, so failed: \(reason)"); return }
        let p = try Self.withNonce.get()
        let box = try sandbox(p)
        var r = try box.signin("login")
        #expect(r.status == 0, "\(r.stderr)")
        r = try box.signin("token", "--force-refresh")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try box.signin("token", "--json").stdout.contains(#""token_type":"DPoP""#))

        let bearer = try sandbox(p, extra: ["dpop": "never", "pushed_authorization": "never"])
        r = try bearer.signin("login")
        #expect(r.status == 0, "\(r.stderr)")
        let token = try bearer.signin("token").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try httpStatus(["-H", "Authorization: Bearer \(token)", p.issuer + "/api/oidc/userinfo"]) == "200")
    }
}
