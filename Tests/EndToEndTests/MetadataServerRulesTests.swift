import Foundation
import Testing

/// The rules of who the metadata server answers, against `signin metadata-server` as it runs.
@Suite struct MetadataServerRulesTests {
    @Test func onlyThisUsersToolsWithTheHeaderAndTheAddressGetAnAnswer() throws {
        let strict = try Shared.strict.get()
        let box = try GoogleShape.sandbox(strict)
        let token = try box.signin("token").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let server = try RunningSignin(box, ["metadata-server", "--json", "--verbose"])
        let first = try #require(server.readLine())
        let port = try #require(GoogleShape.json(first)["port"] as? Int, "\(first) \(server.stderr)")
        let tokenPath = "/computeMetadata/v1/instance/service-accounts/default/token"

        let ok = try metadataRequest(port, tokenPath)
        #expect(ok.status == 200 && ok.body.contains(token))
        #expect(ok.headers.contains("Metadata-Flavor: Google") && ok.headers.contains("Content-Type: application/json"))
        let ping = try metadataRequest(port, "/")
        #expect(ping.status == 200 && ping.headers.contains("Metadata-Flavor: Google"))
        let email = try metadataRequest(port, "/computeMetadata/v1/instance/service-accounts/default/email")
        #expect(email.body == "alice@example.org" && email.headers.contains("Content-Type: application/text"))
        let listing = try metadataRequest(port, "/computeMetadata/v1/instance/service-accounts/")
        #expect(listing.body == "alice@example.org/\ndefault/\n")
        let recursive = GoogleShape.json(try metadataRequest(port, "/computeMetadata/v1/instance/service-accounts/alice@example.org/?recursive=true").body)
        #expect(recursive["email"] as? String == "alice@example.org")
        #expect(recursive["aliases"] as? [String] == ["default"])
        #expect((recursive["scopes"] as? [String])?.contains(GoogleShape.cloudPlatform) == true)
        #expect(try metadataRequest(port, "/computeMetadata/v1/universe/universe-domain").body == "googleapis.com")
        #expect(try metadataRequest(port, "/computeMetadata/v1/instance/zone").status == 404)
        #expect(try metadataRequest(port, "/computeMetadata/v1/instance/service-accounts/mallory@example.org/token").status == 404)
        // The person's own ID token, for this client's audience only.
        let id = try metadataRequest(port, "/computeMetadata/v1/instance/service-accounts/default/identity?audience=\(box.clientID)&format=full")
        #expect(id.status == 200 && id.body.split(separator: ".").count == 3)
        let otherAudience = try metadataRequest(port, "/computeMetadata/v1/instance/service-accounts/default/identity?audience=https://svc.example")
        #expect(otherAudience.status == 404 && otherAudience.body.contains("needs a service account"))

        let refusals: [(String, (exit: Int32, status: Int, headers: String, body: String))] = [
            ("no header", try metadataRequest(port, tokenPath, headers: [])),
            ("a wrong header", try metadataRequest(port, tokenPath, headers: ["Metadata-Flavor: Nope"])),
            ("a proxy", try metadataRequest(port, tokenPath, headers: ["Metadata-Flavor: Google", "X-Forwarded-For: 203.0.113.9"])),
            ("a foreign Host", try metadataRequest(port, tokenPath, headers: ["Metadata-Flavor: Google", "Host: metadata.attacker.example:\(port)"])),
            ("localhost", try metadataRequest(port, tokenPath, headers: ["Metadata-Flavor: Google", "Host: localhost:\(port)"])),
            ("a POST", try metadataRequest(port, tokenPath, method: "POST")),
            ("a CORS preflight", try metadataRequest(port, tokenPath, headers: ["Origin: http://attacker.example", "Access-Control-Request-Method: GET", "Access-Control-Request-Headers: metadata-flavor"], method: "OPTIONS")),
        ]
        for (what, r) in refusals {
            #expect([403, 400, 405].contains(r.status), "\(what): \(r.status)")
            #expect(!r.body.contains(token), "\(what)")
            #expect(r.headers.contains("Metadata-Flavor: Google"), "\(what)")
            #expect(!r.headers.lowercased().contains("access-control-allow"), "\(what)")
        }
        #expect(refusals[0].1.status == 403 && refusals[2].1.status == 403 && refusals[3].1.status == 400 && refusals[5].1.status == 405)
        // Another user of this machine gets no answer at all (the connection is closed unanswered).
        let other = try metadataRequest(port, tokenPath, asUID: 65534)
        #expect(other.status == 0 && other.exit != 0 && !other.body.contains(token), "\(other)")

        let stopped = server.stop(SIGTERM)
        #expect(stopped.status == 0 && !stopped.bySignal, "\(server.stderr)")
        let log = server.stderr
        #expect(log.contains("signin: metadata: GET \(tokenPath) 200"))
        #expect(log.contains("refused a request: no Metadata-Flavor: Google header"))
        #expect(log.contains("refused a request: relayed by a proxy (X-Forwarded-For)"))
        #expect(log.contains("refused a connection from another user, uid 65534"))
        #expect(!log.contains(token))
        #expect(try metadataRequest(port, "/").exit == 7)
    }

    @Test func aWebPageInHeadlessChromiumCannotReadTheServer() throws {
        for path in ["/usr/bin/chromium", "/usr/bin/chromedriver"] { try GoogleShape.requireTool(path, "run scripts/setup --tests") }
        let strict = try Shared.strict.get()
        let box = try GoogleShape.sandbox(strict)
        let token = try box.signin("token").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let server = try RunningSignin(box, ["metadata-server", "--json"])
        let line = try #require(server.readLine())
        let port = try #require(GoogleShape.json(line)["port"] as? Int)
        let url = "http://127.0.0.1:\(port)/computeMetadata/v1/instance/service-accounts/default/token"
        let probe = try Subprocess.run("/usr/bin/python3", [Paths.providers.appendingPathComponent("metadata_page_probe.py").path, url])
        #expect(probe.status == 0, "\(probe.stderr)")
        let results = GoogleShape.json(probe.stdout)
        #expect(results.count == 3, "\(probe.stdout) \(probe.stderr)")
        for (attempt, value) in results {
            let r = value as? [String: Any] ?? [:]
            let body = r["body"] as? String ?? ""
            #expect(!body.contains(token), "\(attempt) read the token")
            #expect(!body.contains("access_token"), "\(attempt): \(r)")
        }
        #expect(((results["with_header"] as? [String: Any])?["outcome"] as? String)?.hasPrefix("refused") == true, "\(results)")
        _ = server.stop(SIGTERM)
    }

    @Test func metadataServerOnAFixedPortSaysWhenThePortIsTaken() throws {
        let strict = try Shared.strict.get()
        let box = try GoogleShape.sandbox(strict)
        let held = try SilentServer()
        let r = try box.signin("metadata-server", "--port", "\(held.port)")
        #expect(r.status == 1)
        #expect(r.stderr.contains("Cannot listen on 127.0.0.1:\(held.port): another program of yours listens there"), "\(r.stderr)")
        // Fourth review, part 8: not signed in, the server still holds its port (nobody else can take it) and
        // answers "not signed in"; after a sign-in it serves the token.
        #expect(try box.signin("logout").status == 0)
        let server = try RunningSignin(box, ["metadata-server", "--json"])
        let line = try #require(server.readLine())
        let port = try #require(GoogleShape.json(line)["port"] as? Int)
        let tokenPath = "/computeMetadata/v1/instance/service-accounts/default/token"
        let before = try metadataRequest(port, tokenPath)
        #expect(before.status == 503 && before.body.contains("not_signed_in"), "\(before)")
        #expect(try box.signin("login").status == 0)
        let after = try metadataRequest(port, tokenPath)
        #expect(after.status == 200 && after.body.contains("access_token"), "\(after)")
        _ = server.stop(SIGTERM)
        #expect(server.stderr.contains("not signed in"), "\(server.stderr)")
        // what the server says to do names the configuration it serves, so `signin login` acts on it.
        #expect(try box.signin("logout").status == 0)
        let named = try RunningSignin(box, ["metadata-server", "--json", "-c", box.configPath])
        _ = try #require(named.readLine())
        _ = named.stop(SIGTERM)
        #expect(named.stderr.contains("until `signin login -c \(box.configPath)`"), "\(named.stderr)")
    }
}
