import Foundation
import Testing

/// Pushed authorization requests (RFC 9126): where the provider lists the endpoint, the request goes there first
/// and the browser opens with only `client_id`, `request_uri` and the repeated `response_type`, `scope` and `redirect_uri`; a provider that requires it, one that lacks it,
/// and a refusal, each as a person would meet them. A strict provider of its own, whose discovery lists the endpoint.
@Suite struct PushedAuthorizationTests {
    static let advertised = Result { try Provider(script: "strict_provider.py", environment: ["STRICT_DISCOVERY": #"{"pushed_authorization_request_endpoint": "{issuer}/par"}"#]).endingWithTheTestProcess() }
    static let required = Result {
        try Provider(script: "strict_provider.py", environment: ["STRICT_DISCOVERY": #"{"pushed_authorization_request_endpoint": "{issuer}/par", "require_pushed_authorization_requests": true}"#])
    }

    @Test func whereTheProviderListsItTheRequestIsPushedAndTheURLCarriesOnlyItsReference() throws {
        let par = try Self.advertised.get()
        let box = try par.sandbox(secret: "strict-secret")
        let r = try box.signin("login")
        #expect(r.status == 0 && r.stdout.contains("Signed in as"), "\(r.stderr)")
        let stats = try par.stats(box.clientID)
        #expect(stats["par_requests"] as? Int == 1 && stats["authorize_pushed"] as? Int == 1, "\(stats)")
        // The OAuth 2.0 required parameters are repeated beside the reference (idpyoidc refuses the page without
        // response_type, and then without redirect_uri); nothing else of the request (state, nonce, challenge) is there.
        #expect(stats["authorize_url_keys"] as? [String] == ["client_id", "redirect_uri", "request_uri", "response_type", "scope"], "\(stats)")
        #expect(stats["par_auth"] as? String == "basic", "the client authenticates as at the token endpoint")
        // `never` keeps the request on the URL.
        let plain = try par.sandbox(extra: ["pushed_authorization": "never"])
        #expect(try plain.signin("login").status == 0)
        #expect(try par.stats(plain.clientID)["par_requests"] == nil)
    }

    /// A pushed request that carries `prompt` (`prompt=consent`, which `offline_access` brings) repeats it on the
    /// browser's URL: idpyoidc 5 reads it there too, and ends in "consent in prompt" without it.
    @Test func aPushedPromptIsRepeatedOnTheURL() throws {
        let par = try Self.advertised.get()
        let box = try par.sandbox(extra: ["scopes": ["openid", "email", "profile", "offline_access"]], secret: "strict-secret")
        let r = try box.signin("login")
        #expect(r.status == 0 && r.stdout.contains("Signed in as"), "\(r.stdout) \(r.stderr)")
        let stats = try par.stats(box.clientID)
        #expect(stats["authorize_url_keys"] as? [String] == ["client_id", "prompt", "redirect_uri", "request_uri", "response_type", "scope"], "\(stats)")
    }

    /// The same against idpyoidc 5 itself (IdentityPython, from PyPI; its own pushed authorization endpoint and its
    /// own authorization endpoint, which reads `prompt`, `response_type`, `scope` and `redirect_uri` from the URL as
    /// well): a sign-in asking `offline_access` (so `prompt=consent`) is pushed once and completes.
    @Test func idpyoidcItselfTakesAPushedRequestWithAPrompt() throws {
        let p = try Provider(script: "idpyoidc_provider.py", environment: ["IDPYOIDC_PAR": "1"])
        defer { p.finish() }  // it removes its folder (idpyoidc's keys) once its input closes
        let port = try freeLoopbackPort()
        let client: [String: Any] = ["client_id": "signin-par", "client_secret": "idpy-secret-par", "redirect_uri": "http://127.0.0.1:\(port)/callback"]
        _ = try p.http("POST", "/_client", body: JSONSerialization.data(withJSONObject: client))
        let box = try Sandbox(issuer: p.issuer, clientID: "signin-par", secret: "idpy-secret-par",
                              extra: ["redirect_port": port, "dpop": "never", "scopes": ["openid", "email", "profile", "offline_access"]])
        let login = try box.signin("login")
        #expect(login.status == 0 && login.stdout.contains("Diana Krall"), "\(login.stdout) \(login.stderr)")
        let stats = try JSONSerialization.jsonObject(with: p.http("GET", "/_stats")) as? [String: Any]
        #expect(stats?["pushed"] as? Int == 1, "\(String(describing: stats))")
        #expect(stats?["authorize_url_keys"] as? [String] == ["client_id", "prompt", "redirect_uri", "request_uri", "response_type", "scope"], "\(String(describing: stats))")
    }

    @Test func aRequiringProviderAMissingEndpointAndARefusalAreClearErrors() throws {
        let required = try Self.required.get()
        let never = try required.sandbox(extra: ["pushed_authorization": "never"])
        var r = try never.signin("login")
        #expect(r.status == 2 && r.stderr.contains("pushed_authorization") && r.stderr.contains("accepts only pushed authorization requests"), "\(r.stderr)")
        #expect(try required.sandbox().signin("login").status == 0, "auto pushes where it is required")

        let strict = try Shared.strict.get()
        let always = try strict.sandbox(extra: ["pushed_authorization": "always"])
        r = try always.signin("login")
        #expect(r.status == 5 && r.stderr.contains("pushed_authorization_request_endpoint"), "\(r.stderr)")

        let par = try Self.advertised.get()
        let refused = try par.sandbox(["par_error": "invalid_request"])
        r = try refused.signin("login")
        #expect(r.status == 5 && r.stderr.contains("pushed authorization request endpoint") && r.stderr.contains("invalid_request"), "\(r.stderr)")
        #expect(refused.entryFile() == nil, "nothing stored")
        #expect(try par.stats(refused.clientID)["authorize_requests"] as? Int ?? 0 == 0, "no browser was sent anywhere")
    }
}
