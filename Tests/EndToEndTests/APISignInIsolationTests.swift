import Foundation
import Testing

/// An API's sign-in is its own: an API that names the person's own provider gets a client of its own, never the
/// configured client and its grant; a command that only reads an API's sign-in asks no server when there is none; two
/// APIs behind one client ID metadata document keep their grants apart; a forwarded request for an API is answered
/// from that API's own sign-in; a step-up that fails keeps the client and grant held.
@Suite struct APISignInIsolationTests {
    /// The strict provider's API at `/api/NAME`, whose metadata (RFC 9728) names the strict provider itself.
    static func api(_ p: Provider, _ name: String) -> String { p.issuer + "/api/" + name }

    /// Signed in with a configured client at the strict provider, with no `resources`: an API whose metadata names
    /// that same provider is signed in to with a client registered for it (the server said before the browser), and
    /// its token is not the person's own.
    @Test func anAPINamingTheConfiguredProviderGetsAClientOfItsOwn() throws {
        // A provider of its own: its registrations are counted, and other tests register at the shared one meanwhile.
        let strict = try Provider(script: "strict_provider.py")
        defer { strict.stop() }
        let box = try strict.signedInSandbox()
        let api = Self.api(strict, "own-provider")
        let registrations = try strict.stats("_api")["registrations"] as? Int ?? 0
        let login = try box.signin("login", "--resource", api, "--timeout", "30")
        #expect(login.status == 0, "\(login.stdout) \(login.stderr)")
        #expect(login.stderr.contains("Signing in to \(api) at \(strict.issuer)"), "the server named before the browser: \(login.stderr)")
        #expect(try strict.stats("_api")["registrations"] as? Int == registrations + 1, "a client of its own, registered for the API")
        let status = try box.signin("status", "--resource", api)
        #expect(status.stdout.contains("registered by signin at the server (RFC 7591)"), "\(status.stdout)")
        let own = try box.signin("token").stdout
        let forAPI = try box.signin("token", "--resource", api)
        #expect(forAPI.status == 0 && !forAPI.stdout.isEmpty && forAPI.stdout != own, "\(forAPI.stderr)")
    }

    /// `whoami`, `status` and `token --resource URL` for an API never signed in: exit 3 with the command that signs
    /// in, and no request to any server (no metadata read, nothing registered); with a configuration and without.
    @Test(arguments: [true, false]) func readingAnAPINeverSignedInAsksNoServer(configured: Bool) throws {
        // A provider of its own: nothing else may read its API's metadata or register there meanwhile.
        let strict = try Provider(script: "strict_provider.py")
        defer { strict.stop() }
        let box = try configured ? strict.signedInSandbox() : strict.sandbox()
        if !configured { box.environment["SIGNIN_CONFIG"] = "" }
        let api = Self.api(strict, "never-\(configured)")
        let before = try strict.stats("_api")
        for command in ["whoami", "status", "token"] {
            let r = try box.signin(command, "--resource", api)
            #expect(r.status == 3 && r.stdout.isEmpty || command == "status" && r.status == 3, "\(command): \(r.status) \(r.stdout) \(r.stderr)")
            #expect(r.stderr.contains("signin login --resource \(api)"), "\(command): \(r.stderr)")
        }
        let after = try strict.stats("_api")
        #expect(after["registrations"] as? Int == before["registrations"] as? Int, "nothing registered: \(after)")
        #expect(after["metadata_fetches"] as? Int == before["metadata_fetches"] as? Int, "no metadata read: \(after)")
    }

    /// Two APIs behind one server signed in through one client ID metadata document (one client ID for both): each
    /// keeps its own grant; signing one out leaves the other, and each token is its own API's.
    @Test func twoAPIsOfOneMetadataDocumentKeepTheirGrantsApart() throws {
        let p = try ClientIDMetadataDocumentTests.documentProvider()
        defer { p.stop() }
        let box = try Sandbox(issuer: p.issuer)
        box.environment["SIGNIN_CONFIG"] = ""
        box.environment["SIGNIN_CLIENT_ID_METADATA_DOCUMENT"] = try ClientIDMetadataDocumentTests.host("signin.json", at: p, box).url
        let (orders, billing) = (Self.api(p, "orders"), Self.api(p, "billing"))
        for api in [orders, billing] {
            let login = try box.signin("login", "--resource", api, "--timeout", "30")
            #expect(login.status == 0, "\(api): \(login.stdout) \(login.stderr)")
        }
        let ordersToken = try box.signin("token", "--resource", orders)
        let billingToken = try box.signin("token", "--resource", billing)
        #expect(ordersToken.status == 0 && billingToken.status == 0 && ordersToken.stdout != billingToken.stdout, "\(ordersToken.stderr) \(billingToken.stderr)")
        #expect(try TokensForEveryAPITests.audience(of: ordersToken.stdout.trimmingCharacters(in: .whitespacesAndNewlines), p) == orders)
        let logout = try box.signin("logout", "--resource", billing, "--yes")
        #expect(logout.status == 0, "\(logout.stderr)")
        let still = try box.signin("token", "--resource", orders)
        #expect(still.status == 0 && still.stdout == ordersToken.stdout, "signing billing out left orders: \(still.status) \(still.stderr)")
        let gone = try box.signin("token", "--resource", billing)
        #expect(gone.status == 3, "\(gone.stderr)")
    }

    /// Through `signin ssh --resource API` for an API signed in to from its address: the remote side gets the token
    /// of that API's own sign-in (the one `token --resource` prints here), not one refreshed through the configured
    /// client; another API signed in here but not forwarded (by a session for one API, or one that names none), and an API
    /// with no sign-in here, are refused when the session is asked for them.
    @Test func aForwardedAPITokenComesFromTheAPIsOwnSignIn() throws {
        // A provider of its own: the tests that count the shared one's registrations are not disturbed.
        let strict = try Provider(script: "strict_provider.py")
        defer { strict.stop() }
        let box = try strict.signedInSandbox()
        box.environment["XDG_RUNTIME_DIR"] = try box.shortFolder()
        box.environment["XDG_STATE_HOME"] = box.root.appendingPathComponent("state").path
        let api = Self.api(strict, "forwarded")
        let login = try box.signin("login", "--resource", api, "--timeout", "30")
        #expect(login.status == 0, "\(login.stderr)")
        let local = try box.signin("token", "--resource", api).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let remote = try RemoteMachine(box)
        // A second API signed in here too, but not forwarded: the session for the first never hands out its token.
        let second = Self.api(strict, "not-forwarded")
        #expect(try box.signin("login", "--resource", second, "--timeout", "30").status == 0)
        let r = try box.signin(["ssh", "--resource", api] + remote.sshArguments + ["echo \"api=$(signin token --resource \(api))\"; signin token --resource \(second); echo \"second=$?\""])
        #expect(r.stdout.contains("api=\(local)\n"), "\(r.stdout) \(r.stderr)")
        #expect(r.stdout.contains("second=3\n") && r.stderr.contains("this forwarded session gives only access tokens for --resource \(api)"), "\(r.stdout) \(r.stderr)")
        // A session that names no API forwards no API's sign-in either: an API is an account of its own, named to forward.
        let unnamed = try box.signin(["ssh"] + remote.sshArguments + ["signin token --resource \(api); echo \"unnamed=$?\""])
        #expect(unnamed.stdout.contains("unnamed=3\n") && unnamed.stderr.contains("the API \(api) is not forwarded to this machine (on the laptop: signin ssh --resource \(api) ...)"),
                "\(unnamed.stdout) \(unnamed.stderr)")
        // An unrestricted session asking for an API that is neither configured nor signed in: refused, not asked of
        // the configured provider with the person's grant.
        let open = try box.signin(["ssh"] + remote.sshArguments + ["signin token --resource https://unlisted.example.test/ >/dev/null; echo \"unlisted=$?\""])
        #expect(open.stdout.contains("unlisted=3"), "\(open.stdout) \(open.stderr)")
        let unknown = try box.signin(["ssh", "--resource", "https://unknown.example.test/api"] + remote.sshArguments + ["true"])
        #expect(unknown.status != 0 && unknown.stderr.contains("neither one of the configuration's resources nor signed in to"), "\(unknown.stdout) \(unknown.stderr)")
    }

    /// A step-up that needs a new client (the scope is not among those the held client registered) and whose sign-in
    /// does not finish keeps the held client and grant: the API's token is still handed out. A step-up that finishes
    /// then holds the new scopes.
    @Test func aStepUpThatFailsKeepsTheClientAndGrantHeld() throws {
        let p = try Provider(script: "mcp_server.py", arguments: ["--split", "--mcp", "mcp", "--unlisted", "admin"])
        defer { p.stop() }
        let url = try #require(p.readyWords.first)
        let box = try MCPServerTests.machine(p)
        let login = try box.signin("login", "--resource", url, "--timeout", "30")
        #expect(login.status == 0, "\(login.stdout) \(login.stderr)")
        let held = try box.signin("token", "--resource", url)
        #expect(held.status == 0, "\(held.stderr)")
        // The browser never finishes: the sign-in times out.
        let failed = try box.signin(["login", "--resource", url, "--scope", "admin", "--timeout", "2"], env: ["STANDIN_MODE": "none"])
        #expect(failed.status != 0, "\(failed.stdout) \(failed.stderr)")
        #expect(failed.stderr.contains("Stepping up: asking also for admin"), "\(failed.stderr)")
        #expect(try MCPServerTests.stats(p)["registrations"] as? Int == 2, "the step-up registered a client that covers admin")
        let after = try box.signin("token", "--resource", url)
        #expect(after.status == 0 && after.stdout == held.stdout, "the held grant still answers: \(after.status) \(after.stderr)")
        let stepUp = try box.signin("login", "--resource", url, "--scope", "admin", "--timeout", "30")
        #expect(stepUp.status == 0, "\(stepUp.stdout) \(stepUp.stderr)")
        let status = try box.signin("status", "--resource", url)
        #expect(status.stdout.contains("Granted scopes: mcp admin") || status.stdout.contains("Granted scopes: admin mcp"), "\(status.stdout)")
        let refreshed = try box.signin("token", "--resource", url, "--force-refresh")
        #expect(refreshed.status == 0, "the new client's grant refreshes: \(refreshed.stderr)")
    }
}
