import Foundation
import Testing

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

/// A company network: an MCP server (the MCP SDK's, over TLS) whose certificate only the company's CA vouches for. A
/// configuration file holding only `ca_file` (what an administrator deploys) reaches it from its address alone: the
/// API's metadata, its authorization server's, the registration, the code exchange, the refresh, and the MCP
/// requests `signin mcp` carries. Without it, the first request is refused naming the certificate.
@Suite struct CompanyCATests {
    @Test func aFileHoldingOnlyCAFileReachesAnMCPServerBehindACompanyCA() throws {
        let cert = NSTemporaryDirectory() + "signin-company-ca-\(UUID().uuidString).pem"
        defer { try? FileManager.default.removeItem(atPath: cert) }
        let p = try Provider(script: "mcp_server.py", arguments: ["--tls", cert])
        defer { p.stop() }
        let url = try #require(p.readyWords.first)
        #expect(url.hasPrefix("https://"))
        let box = try Sandbox(issuer: "https://127.0.0.1:\(p.port)")
        try box.writeConfig(["ca_file": cert])
        box.environment["STANDIN_MODE"] = "visit"
        // The browser stand-in trusts the company CA as the person's browser would (Python's ssl reads SSL_CERT_FILE).
        let login = try box.signin(["login", "--resource", url, "--timeout", "30"], env: ["SSL_CERT_FILE": cert])
        #expect(login.status == 0 && login.stdout.contains("Signed in to \(url)"), "\(login.stdout) \(login.stderr)")
        let token = try box.signin("token", "--resource", url, "--force-refresh")
        #expect(token.status == 0 && !token.stdout.isEmpty, "a refresh through the company CA: \(token.stderr)")
        // signin mcp reads the same file ($SIGNIN_CONFIG, as an MCP client's configuration sets it).
        let (bridge, answer) = try MCPBridgeTests.client(box, "basic", url)
        #expect(bridge.status == 0 && answer["sum"] as? String == "5", "\(bridge.stdout) \(bridge.stderr)")

        // The same server without the file: refused at the first request, naming the certificate, nothing stored.
        let outside = try Sandbox(issuer: "https://127.0.0.1:\(p.port)")
        outside.environment["SIGNIN_CONFIG"] = ""
        outside.environment["STANDIN_MODE"] = "visit"
        let refused = try outside.signin(["login", "--resource", url, "--timeout", "10"], env: ["SSL_CERT_FILE": cert])
        #expect(refused.status == 5 && refused.stderr.lowercased().contains("certificate"), "\(refused.stderr)")
        #expect(!refused.stderr.contains("Opening the browser"))
    }
}
