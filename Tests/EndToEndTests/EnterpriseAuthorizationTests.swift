import Foundation
import Testing

/// MCP's enterprise-managed authorization (ID-JAG): the configured provider is the company's IdP (the strict provider,
/// which mints ID-JAGs as its policy allows and records what it was sent); each MCP server is the MCP Python SDK's,
/// with `identity_assertion_enabled` and its own authorization server (Tests/Providers/mcp_server.py
/// `--identity-assertion`), where the configuration holds this client's registration.
@Suite struct EnterpriseAuthorizationTests {
    /// An MCP server whose authorization server takes ID-JAGs from `idp`.
    static func server(_ idp: Provider) throws -> (Provider, String) {
        let p = try Provider(script: "mcp_server.py", arguments: ["--identity-assertion", idp.issuer])
        return (p, try #require(p.readyWords.first))
    }

    /// A person signed in once at the IdP, with the registrations of `servers` in the configuration.
    static func person(_ idp: Provider, _ servers: [Provider]) throws -> Sandbox {
        var registrations: [String: Any] = [:]
        for s in servers { registrations[s.issuer] = ["client_id": "ema-client", "client_secret": "ema-secret", "token_endpoint_auth_method": "client_secret_post"] }
        return try idp.signedInSandbox(extra: ["enterprise_authorization": ["authorization_servers": registrations]])
    }

    static func idjagRequests(_ idp: Provider, _ box: Sandbox) throws -> [[String: Any]] {
        (try idp.stats(box.clientID)["idjag_requests"] as? [[String: Any]]) ?? []
    }

    /// One IdP sign-in gives a token for each of two MCP servers with no browser: each exchange names that server's
    /// authorization server and the server, authenticated as the configured client, with the ID token as subject;
    /// each server redeems its own ID-JAG once; a fresh token is answered again from the store (nothing asked of
    /// anyone); the token is in no file in clear and on no standard error; `signin mcp URL` works with it.
    @Test func oneIdPSignInGivesEveryServerItsOwnTokenWithNoBrowser() throws {
        let idp = try Shared.strict.get()
        let (one, url1) = try Self.server(idp)
        defer { one.stop() }
        let (two, url2) = try Self.server(idp)
        defer { two.stop() }
        let box = try Self.person(idp, [one, two])
        let launches = MCPBridgeTests.browserLaunches(box)
        let t1 = try box.signin("token", "--resource", url1)
        let t2 = try box.signin("token", "--resource", url2)
        #expect(t1.status == 0 && t2.status == 0, "\(t1.stderr) \(t2.stderr)")
        let (a, b) = (t1.stdout.trimmingCharacters(in: .whitespacesAndNewlines), t2.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(!a.isEmpty && !b.isEmpty && a != b)
        let asked = try Self.idjagRequests(idp, box)
        #expect(asked.count == 2, "\(asked)")
        #expect(Set(asked.compactMap { $0["audience"] as? String }) == [one.issuer, two.issuer] && Set(asked.compactMap { $0["resource"] as? String }) == [url1, url2])
        #expect(asked.allSatisfy { $0["subject_token_type"] as? String == "urn:ietf:params:oauth:token-type:id_token" && $0["requested_token_type"] as? String == "urn:ietf:params:oauth:token-type:id-jag" })
        let (redeemed1, redeemed2) = (try MCPServerTests.stats(one)["idjag_redeemed"] as? Int, try MCPServerTests.stats(two)["idjag_redeemed"] as? Int)
        #expect(redeemed1 == 1 && redeemed2 == 1)
        let status = try box.signin("status").stdout
        #expect(status.contains("MCP server \(url1) (enterprise sign-in): token until") && status.contains("MCP server \(url2)"), "\(status)")
        let accounts = try box.signin("accounts").stdout
        #expect(accounts.contains("    MCP server \(url1): token until") && accounts.contains("    MCP server \(url2): token until"), "\(accounts)")
        // Fresh means no network.
        let again = try box.signin("token", "--resource", url1)
        let askedAgain = try Self.idjagRequests(idp, box).count
        #expect(again.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == a && askedAgain == 2)
        #expect(try MCPServerTests.stats(one)["idjag_redeemed"] as? Int == 1)
        // The bridge uses it, with no browser.
        let (run, answer) = try MCPBridgeTests.client(box, "basic", url1)
        #expect(run.status == 0 && answer["sum"] as? String == "5", "\(run.stdout) \(run.stderr)")
        #expect(MCPBridgeTests.browserLaunches(box) == launches, "no browser after the IdP sign-in")
        for token in [a, b] {
            #expect(!t1.stderr.contains(token) && !run.stderr.contains(token))
            for case let file as String in FileManager.default.enumerator(atPath: box.root.path)?.allObjects ?? [] {
                #expect(!((try? Data(contentsOf: box.root.appendingPathComponent(file))) ?? Data()).contains(token), "the token in clear in \(file)")
            }
        }
    }

    /// The IdP's policy refuses a server: a clear error naming the server and the IdP's reason, nothing on standard
    /// output, nothing stored, nothing sent to the server; a server whose authorization server takes no ID-JAGs (no
    /// registration here, no id-jag grant profile listed) is never sent one, and the error says how to sign in to it on
    /// its own.
    @Test func aRefusedServerAndAServerWithoutRegistrationAreSaid() throws {
        let idp = try Shared.strict.get()
        let (refused, url) = try Self.server(idp)
        defer { refused.stop() }
        let other = try Provider(script: "mcp_server.py")
        defer { other.stop() }
        let otherURL = try #require(other.readyWords.first)
        let box = try Self.person(idp, [refused])
        try idp.control(box.clientID, ["idjag_refused": [refused.issuer]])
        let r = try box.signin("token", "--resource", url)
        #expect(r.status != 0 && r.stdout.isEmpty, "\(r.status) \(r.stdout)")
        #expect(r.stderr.contains(url) && r.stderr.contains("policy"), "\(r.stderr)")
        #expect(try MCPServerTests.stats(refused)["idjag_redeemed"] == nil)
        let unregistered = try box.signin("token", "--resource", otherURL)
        #expect(unregistered.status != 0 && unregistered.stderr.contains("nor has a registration") && unregistered.stderr.contains("signin login --resource"), "\(unregistered.stderr)")
        #expect(try Self.idjagRequests(idp, box).allSatisfy { $0["audience"] as? String != other.issuer }, "no ID-JAG asked for a server without registration")
    }

    /// An administrator deploys the configuration for everyone (`$XDG_CONFIG_DIRS/signin/config.json`): a person with
    /// none of their own signs in at the IdP with it and gets a server's token; a file others may write is passed over.
    @Test func aSystemWideConfigurationServesAPersonWithNone() throws {
        let idp = try Shared.strict.get()
        let (server, url) = try Self.server(idp)
        defer { server.stop() }
        let box = try Self.person(idp, [server])
        let system = box.root.appendingPathComponent("etc-xdg")
        try FileManager.default.createDirectory(at: system.appendingPathComponent("signin"), withIntermediateDirectories: true)
        let deployed = system.appendingPathComponent("signin/config.json").path
        try FileManager.default.moveItem(atPath: box.configPath, toPath: deployed)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: deployed)
        box.environment["SIGNIN_CONFIG"] = ""
        box.environment["XDG_CONFIG_DIRS"] = system.path
        let t = try box.signin("token", "--resource", url)
        #expect(t.status == 0 && !t.stdout.isEmpty, "\(t.status) \(t.stderr)")
        try FileManager.default.setAttributes([.posixPermissions: 0o666], ofItemAtPath: deployed)
        let passedOver = try box.signin("token", "--resource", url, "--force-refresh")
        #expect(passedOver.status != 0, "a configuration anyone may write is not read: \(passedOver.stderr)")
    }

    /// `logout --resource URL` forgets that server's token alone (the IdP sign-in and the other server's token stay);
    /// an IdP whose session ended refuses even a fresh ID token: `token` exits 3 naming `signin login`.
    @Test func oneServerIsSignedOutAloneAndAnEndedIdPSessionSaysSignInAgain() throws {
        let idp = try Shared.strict.get()
        let (one, url1) = try Self.server(idp)
        defer { one.stop() }
        let (two, url2) = try Self.server(idp)
        defer { two.stop() }
        let box = try Self.person(idp, [one, two])
        #expect(try box.signin("token", "--resource", url1).status == 0 && box.signin("token", "--resource", url2).status == 0)
        let out = try box.signin("logout", "--resource", url1)
        #expect(out.status == 0 && out.stdout.contains("Forgot the token for \(url1)"), "\(out.stdout) \(out.stderr)")
        #expect(try box.signin("whoami").status == 0, "still signed in at the IdP")
        let asked = try Self.idjagRequests(idp, box).count
        #expect(try box.signin("token", "--resource", url2).status == 0)
        #expect(try Self.idjagRequests(idp, box).count == asked, "the other server's token is still kept")
        #expect(try box.signin("token", "--resource", url1).status == 0)
        #expect(try Self.idjagRequests(idp, box).count == asked + 1, "a new exchange for the server signed out of")
        try idp.control(box.clientID, ["idjag_session_ended": true])
        let ended = try box.signin("token", "--resource", url2, "--force-refresh")
        #expect(ended.status == 3 && ended.stderr.contains("signin login") && ended.stdout.isEmpty, "\(ended.status) \(ended.stderr)")
    }

    /// Over `signin ssh --resource URL`, the remote machine gets the MCP server's token from the laptop's agent: the
    /// ID token and the IdP grant stay on the laptop, and the remote side holds nothing.
    @Test func overSSHTheRemoteSideGetsTheServersTokenAlone() throws {
        let idp = try Shared.strict.get()
        let (server, url) = try Self.server(idp)
        defer { server.stop() }
        let box = try Self.person(idp, [server])
        box.environment["XDG_RUNTIME_DIR"] = try box.shortFolder()
        box.environment["XDG_STATE_HOME"] = box.root.appendingPathComponent("state").path
        let remote = try RemoteMachine(box)
        let r = try box.signin(["ssh", "--resource", url] + remote.sshArguments + ["signin token --resource \(url); echo token=$?; signin id-token >/dev/null 2>&1; echo id=$?"])
        #expect(r.stdout.contains("token=0\n") && r.stdout.contains("id=") && !r.stdout.contains("id=0\n"), "\(r.stdout) \(r.stderr)")
        let token = r.stdout.split(separator: "\n").first.map(String.init) ?? ""
        let local = try box.signin("token", "--resource", url).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(!token.isEmpty && token == local, "the laptop's token for the server: \(r.stdout)")
        #expect(try MCPServerTests.stats(server)["idjag_redeemed"] as? Int == 1)
    }

    /// The configuration's section is checked on read, each error naming the field.
    @Test func theSectionIsCheckedByField() throws {
        let idp = try Shared.strict.get()
        let box = try idp.sandbox()
        for (section, field) in [(["authorization_servers": []] as [String: Any], "enterprise_authorization.authorization_servers"),
                                 (["authorization_servers": ["https://as.example": ["client_secret": "s"]]], "client_id"),
                                 (["authorization_servers": ["https://as.example": ["client_id": "c", "token_endpoint_auth_method": "client_secret_post"]]], "client_secret"),
                                 (["authorization_servers": ["http://as.example": ["client_id": "c"]]], "as.example"),
                                 (["servers": [:]], "enterprise_authorization.servers")] {
            try box.editConfig { $0["enterprise_authorization"] = section }
            let r = try box.signin("status")
            #expect(r.status == 2 && r.stderr.contains(field), "\(field): \(r.status) \(r.stderr)")
        }
    }

    /// fastmcp 4.1.6's own server (`OAuthProxy` with `IdentityAssertion`: its authorization server lists the id-jag
    /// grant profile and registers only public clients), with the public client an administrator registered there in
    /// the configuration (`none`): one IdP sign-in buys its token, each ID-JAG redeemed once, and `signin mcp` bridges
    /// to it with no browser.
    @Test func fastmcpsServerTakesTheEnterpriseSignInWithAPublicClient() throws {
        let idp = try Shared.strict.get()
        let fast = try Provider(script: "fastmcp_server.py", arguments: [idp.issuer])
        defer { fast.stop() }
        let url = try #require(fast.readyWords.first)
        let issuer = "http://127.0.0.1:\(fast.port)/"  // as fastmcp's RFC 8414 document spells it
        // The administrator registers signin there once (fastmcp adds the jwt-bearer grant to every client it registers).
        let registration: [String: Any] = ["client_name": "signin (company)", "token_endpoint_auth_method": "none", "redirect_uris": ["http://127.0.0.1/callback"]]
        let answer = try JSONSerialization.jsonObject(with: fast.http("POST", "/register", body: JSONSerialization.data(withJSONObject: registration))) as? [String: Any]
        let clientID = try #require(answer?["client_id"] as? String, "\(String(describing: answer))")
        let box = try idp.signedInSandbox(extra: ["enterprise_authorization": ["authorization_servers": [issuer: ["client_id": clientID, "token_endpoint_auth_method": "none"]]]])
        // The IdP's policy names that client in the ID-JAGs it mints for fastmcp's server (fastmcp checks the claim).
        try idp.control(box.clientID, ["idjag_clients": [issuer: clientID]])
        let launches = MCPBridgeTests.browserLaunches(box)
        let first = try box.signin("token", "--resource", url)
        #expect(first.status == 0 && !first.stdout.isEmpty, "\(first.stderr)")
        let asked = try Self.idjagRequests(idp, box)
        #expect(asked.count == 1 && asked.first?["audience"] as? String == issuer && asked.first?["resource"] as? String == url, "\(asked)")
        let (run, result) = try MCPBridgeTests.client(box, "basic", url)
        #expect(run.status == 0 && result["sum"] as? String == "5", "\(run.stdout) \(run.stderr)")
        #expect(MCPBridgeTests.browserLaunches(box) == launches, "no browser for the server")
        #expect(try Self.idjagRequests(idp, box).count == 1, "the kept token served the bridge")
    }

    /// A server whose authorization server lists the id-jag grant profile and has no registration in the configuration
    /// (`"enterprise_authorization": {}`): signin registers itself there (RFC 7591, fastmcp's public client), keeps the
    /// registration, and presents it; once the IdP's policy names that client, the token comes, and the registration
    /// is reused (never registered twice).
    @Test func aServerListingTheIdJagProfileIsRegisteredAtOnceAndTheRegistrationKept() throws {
        let idp = try Shared.strict.get()
        let fast = try Provider(script: "fastmcp_server.py", arguments: [idp.issuer])
        defer { fast.stop() }
        let url = try #require(fast.readyWords.first)
        let issuer = "http://127.0.0.1:\(fast.port)/"
        let box = try idp.signedInSandbox(extra: ["enterprise_authorization": [String: Any]()])
        func clients() throws -> [String] { (try JSONSerialization.jsonObject(with: fast.http("GET", "/_clients")) as? [String]) ?? [] }
        // The IdP does not know the client yet (its ID-JAG names another): refused at fastmcp, nothing kept but the registration.
        let refused = try box.signin("token", "--resource", url)
        #expect(refused.status != 0 && refused.stdout.isEmpty && refused.stderr.contains("invalid_grant"), "\(refused.status) \(refused.stderr)")
        let registered = try clients()
        #expect(registered.count == 1, "signin registered itself once: \(registered)")
        try idp.control(box.clientID, ["idjag_clients": [issuer: try #require(registered.first)]])
        let token = try box.signin("token", "--resource", url)
        #expect(token.status == 0 && !token.stdout.isEmpty, "\(token.stderr)")
        #expect(try clients() == registered, "the kept registration was presented again")
        #expect(try Self.idjagRequests(idp, box).allSatisfy { $0["audience"] as? String == issuer })
    }

    /// `login --resource URL` under the enterprise configuration: for a server whose authorization server takes ID-JAGs,
    /// the person's sign-in at the IdP serves (no browser: signed in there already), the server's token is bought now
    /// and then answered from the store; for a server that takes none, its own sign-in (its browser), saying so.
    @Test func loginForAServerSignsInThroughTheIdPWhereItTakesIDJAGs() throws {
        let idp = try Shared.strict.get()
        let (server, url) = try Self.server(idp)
        defer { server.stop() }
        let box = try Self.person(idp, [server])
        let launches = MCPBridgeTests.browserLaunches(box)
        let login = try box.signin("login", "--resource", url)
        #expect(login.status == 0 && login.stdout.contains("Signed in to \(url)") && login.stdout.contains("through \(idp.issuer)"), "\(login.stdout) \(login.stderr)")
        #expect(MCPBridgeTests.browserLaunches(box) == launches, "no browser: the IdP sign-in serves")
        #expect(try Self.idjagRequests(idp, box).count == 1 && MCPServerTests.stats(server)["idjag_redeemed"] as? Int == 1)
        let token = try box.signin("token", "--resource", url)
        let exchanges = try Self.idjagRequests(idp, box).count
        #expect(token.status == 0 && !token.stdout.isEmpty && exchanges == 1, "the token login bought, from the store: \(token.stderr)")

        let plain = try Provider(script: "mcp_server.py")
        defer { plain.stop() }
        let plainURL = try #require(plain.readyWords.first)
        let own = try box.signin(["login", "--resource", plainURL, "--timeout", "30"], env: ["STANDIN_MODE": "visit"])
        #expect(own.status == 0 && own.stderr.contains("the authorization server the API names"), "\(own.stdout) \(own.stderr)")
        #expect(MCPBridgeTests.browserLaunches(box) == launches + 1, "the server's own sign-in")
        #expect(try Self.idjagRequests(idp, box).count == 1, "no ID-JAG for a server that takes none")
    }

    /// Renewal and replay: a server's token is bought anew (`--force-refresh`, as when it ends: a new exchange at the
    /// IdP, a new ID-JAG), never by presenting an ID-JAG again: the server, which refuses a `jti` it has seen, refuses
    /// none. A token that lasts is answered from the store.
    @Test func aRenewedTokenIsBoughtWithANewAssertionNeverAReplayedOne() throws {
        let idp = try Shared.strict.get()
        let (server, url) = try Self.server(idp)
        defer { server.stop() }
        _ = try server.http("POST", "/_misbehave", body: Data(#"{"ttl": 30}"#.utf8))
        let box = try Self.person(idp, [server])
        let first = try box.signin("token", "--resource", url)
        #expect(first.status == 0, "\(first.stderr)")
        let cached = try box.signin("token", "--resource", url, "--min-ttl", "10")
        let exchanges = try Self.idjagRequests(idp, box).count
        #expect(cached.stdout == first.stdout && exchanges == 1, "30 s left, 10 asked: from the store")
        let renewed = try box.signin("token", "--resource", url, "--force-refresh")
        #expect(renewed.status == 0 && renewed.stdout != first.stdout, "\(renewed.stderr)")
        let stats = try MCPServerTests.stats(server)
        #expect(try Self.idjagRequests(idp, box).count == 2 && stats["idjag_redeemed"] as? Int == 2, "\(stats)")
        #expect(stats["idjag_refused"] == nil, "no assertion presented twice: \(stats)")
    }

    /// The IdP's session ended, with a person at hand: `login --resource URL` says the sign-in there must be made
    /// again, makes it once (one browser), and buys the server's token with it; `token` then answers from the store.
    @Test func anEndedIdPSessionIsSignedInAgainOnceByLoginForAServer() throws {
        let idp = try Shared.strict.get()
        let (server, url) = try Self.server(idp)
        defer { server.stop() }
        let box = try Self.person(idp, [server])
        #expect(try box.signin("token", "--resource", url).status == 0)
        try idp.control(box.clientID, ["idjag_session_ended_now": true])
        let launches = MCPBridgeTests.browserLaunches(box)
        let login = try box.signin("login", "--resource", url)
        #expect(login.status == 0 && login.stderr.contains("must be made again") && login.stdout.contains("Signed in to \(url)"), "\(login.status) \(login.stdout) \(login.stderr)")
        #expect(MCPBridgeTests.browserLaunches(box) == launches + 1, "one sign-in at the IdP")
        let exchanges = try Self.idjagRequests(idp, box).count
        let token = try box.signin("token", "--resource", url)
        #expect(token.status == 0 && !token.stdout.isEmpty, "\(token.stderr)")
        #expect(try Self.idjagRequests(idp, box).count == exchanges, "from the store")
    }

    /// The same under `signin mcp URL`: the bridge's first request finds the IdP's session ended, signs in there once
    /// (one browser), and the call is answered with the token bought with the new sign-in.
    @Test func anEndedIdPSessionIsSignedInAgainOnceByTheBridge() throws {
        let idp = try Shared.strict.get()
        let (server, url) = try Self.server(idp)
        defer { server.stop() }
        let box = try Self.person(idp, [server])
        try idp.control(box.clientID, ["idjag_session_ended_now": true])
        let launches = MCPBridgeTests.browserLaunches(box)
        let (run, answer) = try MCPBridgeTests.client(box, "basic", url)
        #expect(run.status == 0 && answer["sum"] as? String == "5", "\(run.stdout) \(run.stderr)")
        #expect(MCPBridgeTests.browserLaunches(box) == launches + 1, "one sign-in at the IdP: \(run.stderr)")
    }

    /// `signin mcp URL` with no token yet decides at its start whether the enterprise sign-in serves the server (its
    /// RFC 9728 and RFC 8414 documents read), and buys the token at the first call: that purchase uses what the start
    /// read, so the bridge asks the server for its metadata no more often than `signin token --resource URL` alone.
    @Test func theBridgesFirstTokenReadsTheServersMetadataOnce() throws {
        let idp = try Shared.strict.get()
        let (server, url) = try Self.server(idp)
        defer { server.stop() }
        func metadataGets() throws -> Int { try MCPServerTests.stats(server)["metadata_gets"] as? Int ?? 0 }
        let alone = try Self.person(idp, [server])
        let before = try metadataGets()
        #expect(try alone.signin("token", "--resource", url).status == 0)
        let purchase = try metadataGets() - before
        #expect(purchase >= 1)
        let bridged = try Self.person(idp, [server])
        let start = try metadataGets()
        let (run, answer) = try MCPBridgeTests.client(bridged, "basic", url)
        #expect(run.status == 0 && answer["sum"] as? String == "5", "\(run.stdout) \(run.stderr)")
        let read = try metadataGets() - start
        #expect(read == purchase, "the bridge read the metadata \(read) times, a purchase alone \(purchase)")
    }
}
