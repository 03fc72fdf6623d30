import Foundation
import Testing

/// Real providers' quirks, each reproduced by the strict provider: signin still signs in, and reads a refusal as
/// what the person meant.
@Suite struct ProviderQuirksTests {
    static let awkwardSecret = "a+b/c=d&e~f:g h"

    /// django-oidc-provider decodes HTTP Basic credentials without form-decoding them: Basic with a secret that
    /// form-encoding changes is refused as invalid_client, and signin tries the body once.
    @Test func aSecretWithReservedCharactersSignsInWhereBasicIsDecodedRaw() throws {
        let strict = try Shared.strict.get()
        let box = try strict.sandbox(["secret": Self.awkwardSecret, "basic_raw": true, "access_ttl": 30], secret: Self.awkwardSecret)
        let login = try box.signin("login")
        #expect(login.status == 0, "\(login.stderr)")
        #expect(try box.signin("token", "--force-refresh").status == 0)
        #expect(try strict.stats(box.clientID)["last_refresh_auth"] as? String == "post")
    }

    /// The discovery document's `token_endpoint_auth_methods_supported` is honoured, and the configuration's
    /// `token_endpoint_auth_method` wins over it.
    @Test func theAuthenticationMethodFollowsDiscoveryAndTheConfiguration() throws {
        let postOnly = try Provider(script: "strict_provider.py", environment: ["STRICT_DISCOVERY": #"{"token_endpoint_auth_methods_supported": ["client_secret_post"]}"#])
        defer { postOnly.stop() }
        let box = try postOnly.sandbox(secret: "strict-secret")
        #expect(try box.signin("login").status == 0)
        #expect(try box.signin("token", "--force-refresh").status == 0)
        #expect(try postOnly.stats(box.clientID)["last_refresh_auth"] as? String == "post")
        let strict = try Shared.strict.get()
        let chosen = try strict.sandbox(extra: ["token_endpoint_auth_method": "client_secret_post"], secret: "strict-secret")
        #expect(try chosen.signin("login").status == 0)
        #expect(try chosen.signin("token", "--force-refresh").status == 0)
        #expect(try strict.stats(chosen.clientID)["last_refresh_auth"] as? String == "post")
        let basic = try strict.signedInSandbox(secret: "strict-secret")
        #expect(try basic.signin("token", "--force-refresh").status == 0)
        #expect(try strict.stats(basic.clientID)["last_refresh_auth"] as? String == "basic")
    }

    /// LemonLDAP::NG answers the person's Refuse with `consent_required`: without `prompt=none` that is the person
    /// declining (exit 4), not a provider error (exit 5).
    @Test func consentRequiredWithoutPromptNoneIsThePersonDeclining() throws {
        let strict = try Shared.strict.get()
        let box = try strict.sandbox(["deny": true, "deny_error": "consent_required"])
        let r = try box.signin("login")
        #expect(r.status == 4, "\(r.status) \(r.stderr)")
        let silent = try strict.sandbox(["deny": true, "deny_error": "consent_required"], extra: ["extra_authorization_parameters": ["prompt": "none"]])
        #expect(try silent.signin("login").status == 5, "with prompt=none it is the provider's answer to that")
    }

    @Test func aProviderThatRegistersOnlyLocalhostSignsIn() throws {
        let strict = try Shared.strict.get()
        let refused = try strict.sandbox(["only_localhost": true])
        // The provider refuses the redirect to 127.0.0.1 (the browser stays on its error page): no code comes.
        #expect(try refused.signin("login", "--timeout", "3").status == 6, "127.0.0.1 is not registered there")
        let box = try strict.sandbox(["only_localhost": true], extra: ["redirect_host": "localhost"])
        let r = try box.signin("login")
        #expect(r.status == 0, "\(r.stderr)")
        let bad = try strict.sandbox(extra: ["redirect_host": "0.0.0.0"])
        let badLogin = try bad.signin("login")
        #expect(badLogin.status == 2 && badLogin.stderr.contains("redirect_host"), "\(badLogin.stderr)")
    }

    @Test func offlineAccessAsksForConsent() throws {
        let strict = try Shared.strict.get()
        let box = try strict.sandbox(["offline_needs_consent": true], extra: ["scopes": ["openid", "email", "profile", "offline_access"]])
        let r = try box.signin("login")
        #expect(r.status == 0, "\(r.stderr)")
        // A prompt the configuration chose is kept as it is.
        let chosen = try strict.sandbox(["offline_needs_consent": true], extra: ["scopes": ["openid", "offline_access"], "extra_authorization_parameters": ["prompt": "login"]])
        #expect(try chosen.signin("login", "--timeout", "3").status == 6, "the configuration's own prompt was replaced")
    }
}
