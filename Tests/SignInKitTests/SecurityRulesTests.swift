import Foundation
import Testing
@testable import SignInKit
@testable import SignInBase
@testable import SignInTransport
@testable import SignInProtocol
@testable import SignInStorage

/// The small rules the security review asked for, each on its own input.
@Suite struct SecurityRulesTests {
    /// A DPoP proof is never given for the provider's own endpoints, however the URL spells them (RFC 3986 6: a
    /// provider that normalizes `htu` takes any of these as its token endpoint).
    @Test(arguments: [
        "http://127.0.0.1:9000/oauth/token", "http://127.0.0.1:9000/oauth/./token", "http://127.0.0.1:9000/oauth/x/../token",
        "http://127.0.0.1:9000/oauth/%74oken", "http://127.0.0.1:9000/%6Fauth/token", "HTTP://127.0.0.1:9000/oauth/token/",
        "http://user@127.0.0.1:9000/oauth/token?x=1", "http://127.0.0.1:9000/a/../oauth/token#f",
    ])
    func dpopProofsAreRefusedForEverySpellingOfTheTokenEndpoint(url: String) {
        let e = ProviderEndpoints(issuer: "http://127.0.0.1:9000", authorization: "http://127.0.0.1:9000/oauth/authorize",
                                  token: "http://127.0.0.1:9000/oauth/token", jwks: "http://127.0.0.1:9000/jwks")
        #expect(e.ownEndpointName(of: url) == "token", "\(url)")
    }

    /// A server found from an API: its metadata in the Model Context Protocol's order, and an issuer with a query or
    /// fragment refused (RFC 8414 2).
    @Test func aDiscoveredServersMetadataIsLookedForInTheSpecsOrder() {
        #expect(Discovery.discoveryURLs(issuer: "https://as.example/tenant1") == [
            "https://as.example/.well-known/oauth-authorization-server/tenant1", "https://as.example/.well-known/openid-configuration/tenant1",
            "https://as.example/tenant1/.well-known/openid-configuration"])
        #expect(Discovery.discoveryURLs(issuer: "https://as.example") == [
            "https://as.example/.well-known/oauth-authorization-server", "https://as.example/.well-known/openid-configuration"])
        #expect(Discovery.issuerProblem("https://as.example/?tenant=1") != nil)
        #expect(Discovery.issuerProblem("https://as.example/#x") != nil)
        #expect(Discovery.issuerProblem("https://as.example/t") == nil)
    }

    /// A TPM that fails mid-use at TPM2_Load is not "another TPM" (whose advice, `signin logout`, would throw the grant
    /// away): only an integrity or binding failure of the blob is.
    @Test func onlyAnIntegrityFailureAtLoadMeansAnotherTPM() {
        #expect(TPM.loadFailure(0x9F) == .otherTPM)          // TPM_RC_INTEGRITY
        #expect(TPM.loadFailure(0x1DF) == .otherTPM)         // TPM_RC_INTEGRITY of parameter 1
        #expect(TPM.loadFailure(0xA5) == .otherTPM)          // TPM_RC_BINDING
        #expect(TPM.loadFailure(0xA000A) == .unavailable)    // the TCTI's I/O error: swtpm killed mid-use
        #expect(TPM.loadFailure(0x7000A) == .unavailable)    // an ESAPI layer error
        #expect(TPM.loadFailure(0x922) == .unavailable)      // TPM_RC_RETRY
        #expect(TPM.loadFailure(0x8B) == .failed)            // TPM_RC_HANDLE: says nothing of the blob's TPM
    }

    @Test func normalizationKeepsOtherURLsApart() {
        let e = ProviderEndpoints(issuer: "https://p.example", authorization: "https://p.example/authorize", token: "https://p.example:443/token", jwks: "https://p.example/jwks")
        #expect(e.ownEndpointName(of: "https://p.example/token") == "token")
        #expect(e.ownEndpointName(of: "https://p.example/tokens") == nil)
        #expect(e.ownEndpointName(of: "https://p.example/api/token") == nil)
        #expect(e.ownEndpointName(of: "https://p.example:8443/token") == nil)
        #expect(e.ownEndpointName(of: "https://p.example/%2Ftoken") == nil)
        #expect(EndpointURL.normalized("https://API.example:443/a/%7e/b/./c/../d?q#f") == "https://api.example/a/~/b/d")
    }

    @Test(arguments: [
        ("http://127.0.0.1:8080/token", true), ("http://127.5.6.7/", true), ("http://[::1]:9/x", true),
        ("http://localhost:3000/", true), ("http://LOCALHOST/", true), ("https://example.org/", true),
        // Decided on the address, not on how the name starts.
        ("http://127.evil.example/", false), ("http://127.0.0.1.evil.example/", false), ("http://localhost.evil.example/", false),
        ("http://[::2]/", false), ("http://0x7f.0.0.1/", false), ("http://10.0.0.1/", false), ("http://example.org/", false),
        ("ftp://127.0.0.1/", false), ("127.0.0.1/token", false),
        ("https://example.org/\u{1B}[2Jtoken", false), ("https://example.org/a\r\nb", false),
    ])
    func plainHTTPOnlyToLoopbackAddresses(url: String, allowed: Bool) {
        #expect((EndpointURL.problem(url) == nil) == allowed, "\(url)")
    }

    @Test func aNonLoopbackHTTPEndpointInTheConfigurationIsAConfigurationError() {
        let json = #"{"client_id": "c", "issuer": "http://127.evil.example"}"#
        #expect(throws: SignInError.self) { try SignInConfiguration.parse(Data(json.utf8), sourcePath: "/c.json") }
        do {
            _ = try SignInConfiguration.parse(Data(json.utf8), sourcePath: "/c.json")
        } catch {
            guard case .configInvalid(let file, let field, _) = error else { Issue.record("\(error)"); return }
            #expect(file == "/c.json")
            #expect(field == "issuer")
        }
    }

    @Test func controlCharactersNeverReachTheTerminal() {
        let p = SignInProfile(userID: "u", name: "Mallory\u{1B}[1A\u{1B}[2K\rAlice", email: "a\u{9B}31m@example.org\n")
        #expect(p.displayName == "Mallory[1A[2KAlice <a31m@example.org>")
        let e = SignInError.providerError(endpoint: "token endpoint", code: "x\u{1B}]0;owned\u{07}", detail: "line1\r\nline2\u{1B}[31m")
        #expect(!e.description.unicodeScalars.contains { $0.isControl })
    }

    @Test func tokensWithControlCharactersAreRefused() {
        for bad in ["at\u{1B}[2J", "at\r\nX-Injected: 1", "at with space"] {
            let body = try! JSONSerialization.data(withJSONObject: ["access_token": bad, "token_type": "Bearer"])
            #expect(throws: SignInError.self) { try TokenResponse.parse(HTTPResponse(status: 200, body: body), endpoint: "t") }
        }
    }

    @Test func theRequestHeadCarriesItsHostAndRefusesTwo() {
        let one = HTTPRequestHead.parse(Array("GET /callback?x=1 HTTP/1.1\r\nHost: 127.0.0.1:8765\r\n\r\n".utf8))
        #expect(one == .request(HTTPRequestHead(method: "GET", path: "/callback", query: "x=1", host: "127.0.0.1:8765")))
        let two = HTTPRequestHead.parse(Array("GET / HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n".utf8))
        #expect(two == .malformed)
        let none = HTTPRequestHead.parse(Array("GET / HTTP/1.1\r\n\r\n".utf8))
        #expect(none == .request(HTTPRequestHead(method: "GET", path: "/", query: "", host: nil)))
    }

    @Test func theOwnerOfALoopbackConnectionIsReadFromProcNetTCP() {
        let table = """
              sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
               0: 0100007F:2235 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 100 1 0 100 0 0 10 0
               1: 0100007F:2235 0100007F:C001 01 00000000:00000000 00:00000000 00000000     0        0 101 1 0 20 4 30 10 -1
               2: 0100007F:C001 0100007F:2235 01 00000000:00000000 00:00000000 00000000 65534        0 102 1 0 20 4 30 10 -1
            """
        let data = Data(table.utf8)
        #expect(LoopbackPeer.owner(in: data, client: "0100007F:C001", server: "0100007F:2235") == .uid(65534))
        #expect(LoopbackPeer.owner(in: data, client: "0100007F:C002", server: "0100007F:2235") == nil)
        // A client end that is not established (here FIN_WAIT2, 05; time-wait sockets show uid 0) names no owner.
        let closing = Data(table.replacingOccurrences(of: "0100007F:C001 0100007F:2235 01", with: "0100007F:C001 0100007F:2235 05").utf8)
        if case .uid = LoopbackPeer.owner(in: closing, client: "0100007F:C001", server: "0100007F:2235") { Issue.record("a closing socket was given an owner") }
    }

    /// A listener on 127.0.0.1 (a free port) and a client connected to it, not yet accepted.
    static func connectedPair() throws -> (listener: Int32, client: Int32) {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_addr.s_addr = in_addr_t(0x7f00_0001).bigEndian
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &a) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, len) == 0 && listen(listener, 4) == 0 && getsockname(listener, $0, &len) == 0 }
        }
        let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        let connected = withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(client, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        try #require(bound && connected == 0)
        return (listener, client)
    }

    /// Fourth review, part 4: a client that sends and closes before `accept` leaves a time-wait socket that the kernel
    /// reports as uid 0, which root's listener took for its own user. Such a connection has no owner, for anyone.
    @Test func aClientThatClosedBeforeAcceptHasNoOwner() throws {
        let (listener, client) = try Self.connectedPair()
        defer { close(listener) }
        let request = Array("GET /callback?code=x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        _ = request.withUnsafeBytes { send(client, $0.baseAddress, $0.count, 0) }
        close(client)
        let accepted = accept(listener, nil, nil)
        defer { close(accepted) }
        // The server's FIN has not been sent: the client end waits in FIN_WAIT2, owned by no process.
        switch LoopbackPeer.owner(ofAccepted: accepted) {
        case .uid(let uid): Issue.record("a closed client was taken for uid \(uid)")
        case .unknown(let reason): #expect(reason.contains("closed"), "\(reason)")
        }
    }

    @Test func theKernelNamesTheOwnerOfAnAcceptedConnection() throws {
        let (listener, client) = try Self.connectedPair()
        defer { close(listener); close(client) }
        let accepted = accept(listener, nil, nil)
        defer { close(accepted) }
        #expect(LoopbackPeer.owner(ofAccepted: accepted) == .uid(geteuid()))
    }

    @Test func theOwnerOfARealConnectionIsThisProcessesUser() throws {
        let receiver = try LoopbackReceiver(port: 0, path: "/callback")
        let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(client) }
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_port = in_port_t(UInt16(receiver.port).bigEndian)
        a.sin_addr.s_addr = in_addr_t(0x7f00_0001).bigEndian
        let rc = withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(client, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        #expect(rc == 0)
        // The server's view of the client end is the client's own socket: ask about it from the client side,
        // swapped (its local address is what the listener sees as the peer).
        guard let mine = LoopbackPeer.address(client, peer: false), let theirs = LoopbackPeer.address(client, peer: true),
              let table = try? FileIO.readStream(path: "/proc/net/tcp", limit: 1 << 24) else {
            Issue.record("no /proc/net/tcp")
            return
        }
        #expect(LoopbackPeer.owner(in: table, client: mine.procText, server: theirs.procText) == .uid(geteuid()))
    }
}
