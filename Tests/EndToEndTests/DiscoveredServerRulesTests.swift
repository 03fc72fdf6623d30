import Foundation
import SignInKit
import Testing

/// A server found from an API must offer PKCE with S256 (the Model Context Protocol's authorization requires refusing
/// one that does not say so), and its issuer has no query (RFC 8414 2): refused before any registration.
@Suite struct DiscoveredServerRulesTests {
    @Test(arguments: [#"{"code_challenge_methods_supported": null}"#, #"{"code_challenge_methods_supported": ["plain"]}"#])
    func aServerWithoutS256IsRefusedBeforeRegistering(discovery: String) throws {
        let p = try Provider(script: "strict_provider.py", environment: ["STRICT_DISCOVERY": discovery])
        defer { p.stop() }
        let box = try p.sandbox()
        box.environment["SIGNIN_CONFIG"] = ""
        let r = try box.signin("login", "--resource", p.issuer + "/api/orders")
        #expect(r.status != 0 && r.stderr.contains("S256"), "\(r.stderr)")
        #expect(try p.stats("_api")["registrations"] == nil, "nothing was registered")
        #expect(box.standinSteps().isEmpty, "no browser was opened")
    }

    /// An authorization server that is also an OpenID provider, whose RFC 8414 document (read first, in the MCP
    /// order) names `openid` among its scopes but has no `jwks_uri` (RFC 8414 makes it optional): the same issuer's
    /// OpenID document gives it, and the sign-in verifies an ID token. The server's metadata is read once on the way.
    @Test func anRFC8414DocumentWithoutAJWKSIsCompletedByTheOpenIDDocument() throws {
        let p = try Provider(script: "strict_provider.py", environment: ["STRICT_AS_METADATA": "hybrid"])
        defer { p.stop() }
        let box = try p.sandbox()
        box.environment["SIGNIN_CONFIG"] = ""
        let api = p.issuer + "/api/hybrid"
        let r = try box.signin("login", "--resource", api, "--timeout", "30")
        #expect(r.status == 0 && r.stdout.contains("Signed in as Alice Example"), "\(r.stdout) \(r.stderr)")
        #expect(try p.stats("_metadata")["fetches"] as? Int == 1, "the RFC 8414 document was read, once")
        let status = try box.signin("status", "--resource", api)
        #expect(status.stdout.contains("alice@example.org"), "\(status.stdout)")
    }

    /// A configured `issuer` (and `scopes` without openid) at a plain OAuth 2.0 server that publishes RFC 8414
    /// metadata only (no OpenID document, no JWKS; Django OAuth Toolkit with OpenID off): discovery alone signs in.
    @Test func aConfiguredPlainOAuthServerSignsInWithDiscoveryAlone() throws {
        let p = try Provider(script: "mcp_server.py")
        defer { p.stop() }
        let port = try freeLoopbackPort()
        let registration: [String: Any] = ["redirect_uris": ["http://127.0.0.1:\(port)/callback"], "token_endpoint_auth_method": "none",
                                           "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"], "scope": "mcp"]
        let answer = try p.http("POST", "/register", body: try JSONSerialization.data(withJSONObject: registration))
        let clientID = try #require((try JSONSerialization.jsonObject(with: answer) as? [String: Any])?["client_id"] as? String, "\(String(decoding: answer, as: UTF8.self))")
        let box = try Sandbox(issuer: p.issuer, clientID: clientID, extra: ["scopes": ["mcp"], "redirect_port": port])
        box.environment["STANDIN_MODE"] = "visit"
        let r = try box.signin("login", "--timeout", "30")
        #expect(r.status == 0 && r.stdout.contains("Signed in to"), "\(r.stdout) \(r.stderr)")
        #expect(try box.signin("token").status == 0)
    }

    /// The same at Django OAuth Toolkit itself (from PyPI; OpenID Connect off, scopes `read` and `write`, PKCE
    /// required, its RFC 8414 document the only metadata): a configuration with `issuer` and `scopes: ["read"]` and no
    /// endpoints signs in, refreshes and revokes with discovery alone.
    @Test func djangoOAuthToolkitWithOpenIDOffSignsInWithTheIssuerAlone() throws {
        let p = try Provider(script: "django_oauth_provider.py")
        defer { p.finish() }  // it removes its folder (the database) once its input closes
        let port = try freeLoopbackPort()
        let client: [String: Any] = ["client_id": "signin-dot", "redirect_uri": "http://127.0.0.1:\(port)/callback"]
        _ = try p.http("POST", "/_client", body: JSONSerialization.data(withJSONObject: client))
        let box = try Sandbox(issuer: p.issuer + "/o", clientID: "signin-dot", extra: ["scopes": ["read"], "redirect_port": port, "dpop": "never"])
        box.environment["STANDIN_MODE"] = "visit"  // no consent page: the toolkit redirects at once
        let login = try box.signin("login", "--timeout", "30")
        #expect(login.status == 0 && login.stdout.contains("Signed in to"), "\(login.stdout) \(login.stderr)")
        let first = try box.signin("token")
        #expect(first.status == 0 && !first.stdout.isEmpty, "\(first.stderr)")
        let refreshed = try box.signin("token", "--force-refresh")
        #expect(refreshed.status == 0 && refreshed.stdout != first.stdout, "\(refreshed.stderr)")
        let stats = try JSONSerialization.jsonObject(with: p.http("GET", "/_stats")) as? [String: Any]
        #expect(stats?["tokens"] as? Int == 2, "the code's exchange and one refresh: \(String(describing: stats))")
        #expect(try box.signin("logout", "--revoke", "--yes").status == 0)
    }

    /// An API whose metadata names another authorization server than the one it named at the first sign-in: refused
    /// with both named and nothing sent to the new one (no person at a terminal to ask); after `logout --resource`,
    /// a sign-in at the new server.
    @Test func anAPIThatMovesToAnotherServerIsNotFollowedSilently() throws {
        let a = try Provider(script: "strict_provider.py")
        defer { a.stop() }
        let b = try Provider(script: "strict_provider.py")
        defer { b.stop() }
        let box = try a.sandbox()
        box.environment["SIGNIN_CONFIG"] = ""
        let api = a.issuer + "/api/moving"
        #expect(try box.signin("login", "--resource", api, "--timeout", "30").status == 0)
        try a.control("_api", ["authorization_server": b.issuer])
        let moved = try box.signin("login", "--resource", api, "--timeout", "30")
        #expect(moved.status == 5 && moved.stderr.contains("now names \(b.issuer)") && moved.stderr.contains(a.issuer), "\(moved.status) \(moved.stderr)")
        #expect(try b.stats("_api")["registrations"] == nil, "nothing sent to the new server")
        #expect(try box.signin("token", "--resource", api).status == 0, "the sign-in at the first server still answers")
        #expect(try box.signin("logout", "--resource", api, "--yes").status == 0)
        let again = try box.signin("login", "--resource", api, "--timeout", "30")
        #expect(again.status == 0 && again.stderr.contains("at \(b.issuer)"), "\(again.stdout) \(again.stderr)")
    }
}
