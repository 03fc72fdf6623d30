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
