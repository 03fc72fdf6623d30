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

/// The profile and scopes a sign-in ends with, where the provider says less than asked.
@Suite struct ProfileAndScopesTests {
    @Test func missingProfileClaimsComeFromUserinfo() throws {
        let strict = try Shared.strict.get()
        let box = try strict.sandbox(["id_token_claims": ["name": NSNull(), "email": NSNull()]])
        let r = try box.signin("login")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == "Signed in as Alice Example <alice@example.org>\n")
    }

    @Test func fewerScopesGrantedAreReportedAndStored() throws {
        let strict = try Shared.strict.get()
        let box = try strict.sandbox(["granted_scope": "openid email"])
        let r = try box.signin("login")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("not granted: profile"))
        #expect(try box.signin("status", "--json").stdout.contains(#""granted_scopes":["openid","email"]"#))
    }
}

@Suite struct TLSTests {
    @Test func signsInOverTLSWithATrustedCertificate() throws {
        let certPath = NSTemporaryDirectory() + "signin-ca-\(UUID().uuidString).pem"
        defer { try? FileManager.default.removeItem(atPath: certPath) }
        let tls = try Provider(script: "strict_provider.py", environment: ["STRICT_TLS": "1", "STRICT_TLS_CERT_OUT": certPath])
        defer { tls.stop() }
        let box = try Sandbox(issuer: "https://127.0.0.1:\(tls.port)", extra: ["ca_file": certPath])
        // The browser stand-in trusts the same certificate (Python's ssl honours SSL_CERT_FILE).
        let r = try box.signin(["login", "--timeout", "20"], env: ["SSL_CERT_FILE": certPath])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == "Signed in as Alice Example <alice@example.org>\n")
        #expect(try box.signin("token", "--force-refresh").status == 0)
        #expect(try box.signin("logout", "--revoke").status == 0)
    }

    @Test func anUntrustedCertificateIsRefused() throws {
        let tls = try Provider(script: "strict_provider.py", environment: ["STRICT_TLS": "1"])
        defer { tls.stop() }
        let box = try Sandbox(issuer: "https://127.0.0.1:\(tls.port)")
        let r = try box.signin("login", "--timeout", "10")  // bounded should verification ever be off
        #expect(r.status == 5, "\(r.stderr)")
        #expect(r.stderr.contains("https://127.0.0.1:\(tls.port)/.well-known/openid-configuration"))
        #expect(r.stderr.lowercased().contains("certificate"))
        #expect(!r.stderr.contains("Opening the browser"))
    }
}

@Suite struct NoRefreshTokenTests {
    @Test func aSignInWithoutRefreshTokenSaysWhatThatMeans() throws {
        let mock = try Provider(script: "mock_provider.py", environment: ["MOCK_NO_REFRESH": "1"])
        defer { mock.stop() }
        let box = try Sandbox(issuer: mock.issuer, secret: "s")
        let r = try box.signin("login")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("issued no refresh token") && r.stderr.contains("offline_access"))
        #expect(try box.signin("token").status == 0)  // the access token itself is fine
        let forced = try box.signin("token", "--force-refresh")
        #expect(forced.status == 3)
        #expect(forced.stderr.contains("no refresh token is stored"))
    }
}
