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

    /// A company proxy: the MCP server is named `mcp.test`, which resolves only on the proxy's side (connect_proxy.py),
    /// over TLS with the company CA. An MCP client starts `signin mcp` with the SDK's default environment (no
    /// `https_proxy`, no `SIGNIN_CONFIG`): the configuration in its default place holding `ca_file` and `proxy` carries
    /// every request through the proxy; without `proxy`, the server cannot be reached and nothing goes to the proxy.
    @Test func aConfiguredProxyCarriesTheBridgeAnMCPClientStartsWithoutTheEnvironment() throws {
        let cert = NSTemporaryDirectory() + "signin-company-ca-\(UUID().uuidString).pem"
        defer { try? FileManager.default.removeItem(atPath: cert) }
        let proxy = try Provider(script: "connect_proxy.py")
        defer { proxy.stop() }
        let p = try Provider(script: "mcp_server.py", arguments: ["--tls", cert, "--host", "mcp.test"])
        defer { p.stop() }
        let url = try #require(p.readyWords.first)
        #expect(url.hasPrefix("https://mcp.test:"))
        let box = try Sandbox(issuer: "https://mcp.test:\(p.port)")
        // The default places, as a client that passes only HOME finds them.
        for key in ["XDG_DATA_HOME", "XDG_CONFIG_HOME", "SIGNIN_CONFIG"] { box.environment[key] = "" }
        let folder = box.root.appendingPathComponent(".config/signin")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let file = folder.appendingPathComponent("config.json")
        func configure(proxied: Bool) throws {
            var config: [String: Any] = ["ca_file": cert, "key_storage": "file"]
            if proxied { config["proxy"] = "http://127.0.0.1:\(proxy.port)" }
            try JSONSerialization.data(withJSONObject: config).write(to: file)
        }
        try configure(proxied: true)
        box.environment["STANDIN_MODE"] = "visit"
        // The person's browser reaches the company's names through the proxy too (the stand-in reads https_proxy).
        let login = try box.signin(["login", "--resource", url, "--timeout", "30"], env: ["SSL_CERT_FILE": cert, "https_proxy": "http://127.0.0.1:\(proxy.port)"])
        #expect(login.status == 0, "\(login.stdout) \(login.stderr)")
        func tunnels() throws -> Int {
            let stats = try JSONSerialization.jsonObject(with: proxy.http("GET", "/_stats")) as? [String: Any]
            return (stats?["tunnels"] as? [String: Int])?["mcp.test:\(p.port)"] ?? 0
        }
        let before = try tunnels()
        let (bridge, answer) = try MCPBridgeTests.client(box, "basic", url, env: ["MCP_CLIENT_DEFAULT_ENV": "1"])
        #expect(bridge.status == 0 && answer["sum"] as? String == "5", "\(bridge.stdout) \(bridge.stderr)")
        let through = try tunnels()
        #expect(through > before, "the bridge's requests went through the configured proxy: \(before) -> \(through)")

        try configure(proxied: false)
        let (alone, _) = try MCPBridgeTests.client(box, "basic", url, env: ["MCP_CLIENT_DEFAULT_ENV": "1"])
        #expect(alone.status != 0, "mcp.test resolves only through the proxy: \(alone.stdout) \(alone.stderr)")
        #expect(try tunnels() == through)
    }

    /// The configured proxy never carries a request to this machine: a provider on loopback (plain http, where a proxy
    /// would read the secret and the tokens) is reached directly, and the proxy sees nothing.
    @Test func theConfiguredProxyNeverCarriesARequestToThisMachine() throws {
        let proxy = try Provider(script: "connect_proxy.py")
        defer { proxy.stop() }
        let idp = try Shared.strict.get()
        let box = try idp.signedInSandbox(extra: ["proxy": "http://127.0.0.1:\(proxy.port)"])
        let refreshed = try box.signin("token", "--force-refresh")
        #expect(refreshed.status == 0 && !refreshed.stdout.isEmpty, "\(refreshed.stderr)")
        let stats = try JSONSerialization.jsonObject(with: proxy.http("GET", "/_stats")) as? [String: Any]
        #expect((stats?["tunnels"] as? [String: Int])?.isEmpty == true, "\(String(describing: stats))")
    }
}
