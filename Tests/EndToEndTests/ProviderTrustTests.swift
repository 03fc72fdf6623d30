import Foundation
import Testing

/// What signin trusts of a provider and a callback, each refusal shown (CSRF, mix-up, PKCE downgrade and ID token
/// attacks are in LoginTests).
@Suite struct ProviderTrustTests {
    @Test func codeInjectedFromAnotherSessionFailsOnPKCE() throws {
        let strict = try Shared.strict.get()
        let box = try Sandbox(issuer: strict.issuer)
        let run = try LiveRun(box, ["login", "--no-browser"])
        let url = try #require(run.waitFor(#"(http://127\.0\.0\.1:\d+/authorize\?\S+)"#))
        // The attacker's own session: same client and redirect, another PKCE challenge. Its code, delivered
        // with the victim's state, must not sign the victim in: the victim's verifier does not match.
        let foreignChallenge = String(repeating: "A", count: 43)
        let attacker = url.replacingOccurrences(of: #"code_challenge=[^&]+"#, with: "code_challenge=\(foreignChallenge)", options: .regularExpression)
        let landing = try providerRedirect(attacker)
        #expect(landing.contains("code="))
        run.send(landing)  // the state in it is the victim's (the attacker reused the victim's URL)
        let r = run.finish()
        #expect(r.status == 5, "\(r.stderr)")
        #expect(r.stderr.contains("invalid_code"))
        #expect(box.entryFile() == nil)
    }

    @Test func tokenEndpointRedirectIsNotFollowed() throws {
        let strict = try Shared.strict.get()
        let box = try strict.sandbox(["token_fault": "redirect"])
        let r = try box.signin("login")
        #expect(r.status == 5, "\(r.stderr)")
        #expect(r.stderr.contains("http_302"))
        #expect(!r.stderr.contains("203.0.113.7"))  // never contacted, never named as if it were the provider
        #expect(box.entryFile() == nil)
    }

    /// A plain-http endpoint off loopback in the configuration is the person's to fix: exit 2 naming the field,
    /// for every command, before anything is sent. `127.evil.example` is a name, not a loopback address.
    @Test func plainHttpEndpointOffLoopbackIsAConfigurationError() throws {
        let strict = try Shared.strict.get()
        for (field, url) in [("token_endpoint", "http://203.0.113.7/token"), ("issuer", "http://127.evil.example"),
                             ("authorization_endpoint", "http://127.0.0.1.nip.io/auth")] {
            let box = try Sandbox(issuer: strict.issuer, extra: [field: url])
            for cmd in ["login", "token", "status", "whoami"] {
                let r = try box.signin(cmd)
                #expect(r.status == 2, "\(cmd) \(r.stderr)")
                #expect(r.stderr.contains("field \"\(field)\"") && r.stderr.contains("not https"), "\(r.stderr)")
            }
            #expect(try strict.stats(box.clientID)["authorize_requests"] as? Int == 0)
        }
    }

    /// The same in a provider's discovery document is the provider's fault: exit 5.
    @Test func plainHttpEndpointOffLoopbackInDiscoveryIsAProviderError() throws {
        let strict = try Provider(script: "strict_provider.py", environment: ["STRICT_DISCOVERY": #"{"token_endpoint": "http://127.evil.example/token"}"#])
        let box = try strict.sandbox()
        let r = try box.signin("login")
        #expect(r.status == 5, "\(r.stderr)")
        #expect(r.stderr.contains("not https"), "\(r.stderr)")
        #expect(box.entryFile() == nil)
    }
}
