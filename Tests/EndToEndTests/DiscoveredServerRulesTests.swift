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
}
