import Foundation
import Testing

/// Any MCP server from its address alone, against software no one here wrote: the Model Context
/// Protocol's own Python SDK (PyPI `mcp`), its authorization-server routes over an in-memory provider and its MCP
/// server with `AuthSettings` (Tests/Providers/mcp_server.py), on one server and apart. A plain OAuth 2.0 server:
/// no OpenID discovery, no JWKS, no ID token. The SDK's own MCP client (Tests/Providers/mcp_client.py) runs under
/// `signin exec`.
@Suite struct MCPServerTests {
    /// A person's machine with nothing configured; the MCP SDK's authorization page approves on sight (a GET).
    static func machine(_ p: Provider) throws -> Sandbox {
        let box = try Sandbox(issuer: p.issuer)
        box.environment["SIGNIN_CONFIG"] = ""
        box.environment["STANDIN_MODE"] = "visit"
        return box
    }

    static func stats(_ p: Provider) throws -> [String: Any] {
        (try JSONSerialization.jsonObject(with: try p.http("GET", "/_stats")) as? [String: Any]) ?? [:]
    }

    /// The SDK's MCP client under `signin exec --resource URL`: what it printed, as JSON.
    static func mcpClient(_ box: Sandbox, _ url: String) throws -> (RunResult, [String: Any]) {
        let r = try box.signin("exec", "--resource", url, "--", Paths.python, Paths.providers.appendingPathComponent("mcp_client.py").path, url)
        let line = r.stdout.split(separator: "\n").last.map(String.init) ?? ""
        return (r, TokensForEveryAPITests.json(line))
    }

    /// `login --resource URL` with nothing configured signs in at the MCP SDK's server (which refuses a token request
    /// without `resource`), names the API on the authorization request and the code exchange, and `exec` runs the
    /// SDK's client with the token: initialize, tools/list, tools/call. Then the sign-in is an account like any other:
    /// whoami, status, accounts, a cached token (no refresh right after the sign-in), logout.
    @Test func anMCPServerFromItsAddressAloneIsSignedInAndUsed() throws {
        let p = try Provider(script: "mcp_server.py", arguments: ["--require-resource"])
        defer { p.stop() }
        let url = try #require(p.readyWords.first)
        let box = try Self.machine(p)
        let login = try box.signin("login", "--resource", url, "--timeout", "30")
        #expect(login.status == 0 && login.stdout.contains("Signed in to \(url)") && login.stdout.contains("the server gives no identity"), "\(login.stdout) \(login.stderr)")
        var stats = try Self.stats(p)
        #expect((stats["authorize"] as? [String: Any])?["resource"] as? String == url, "\(stats)")
        #expect((stats["authorize"] as? [String: Any])?["scopes"] as? [String] == ["mcp"], "only what the server offers, no openid: \(stats)")
        let exchange = (stats["token_requests"] as? [[String: Any]])?.first
        #expect(exchange?["grant_type"] as? String == "authorization_code" && exchange?["resource"] as? String == url, "\(stats)")

        let (run, answer) = try Self.mcpClient(box, url)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(Set(answer["tools"] as? [String] ?? []).isSuperset(of: ["add", "server_name"]) && answer["sum"] as? String == "5", "\(run.stdout) \(run.stderr)")

        let first = try box.signin("token", "--resource", url)
        let second = try box.signin("token", "--resource", url)
        #expect(first.status == 0 && first.stdout == second.stdout)
        stats = try Self.stats(p)
        #expect(stats["refreshes"] as? Int == 0, "the sign-in's token is the API's: no refresh for it: \(stats)")
        let forced = try box.signin("token", "--resource", url, "--force-refresh")
        #expect(forced.status == 0 && forced.stdout != first.stdout, "\(forced.stderr)")
        stats = try Self.stats(p)
        #expect((stats["token_requests"] as? [[String: Any]])?.last?["resource"] as? String == url, "the refresh names the API: \(stats)")

        let whoami = try box.signin("whoami", "--resource", url)
        #expect(whoami.status == 0 && whoami.stdout.contains(url), "\(whoami.stdout) \(whoami.stderr)")
        let status = try box.signin("status", "--resource", url)
        #expect(status.status == 0 && status.stdout.contains("API: \(url)") && status.stdout.contains("Identity: none"), "\(status.stdout)")
        #expect(status.stdout.contains("registered by signin at the server (RFC 7591)"), "how the client is known: \(status.stdout)")
        let accounts = try box.signin("accounts")
        #expect(accounts.status == 0 && accounts.stdout.contains("the API \(url)"), "\(accounts.stdout) \(accounts.stderr)")
        let logout = try box.signin("logout", "--resource", url, "--yes")
        #expect(logout.status == 0, "\(logout.stdout) \(logout.stderr)")
        let after = try box.signin("token", "--resource", url)
        #expect(after.status == 3, "signed out: \(after.stderr)")
    }

    /// Two MCP servers behind one authorization server: a sign-in to the second never drops the first; each gets
    /// tokens for itself (the other server refuses them), and signing one out leaves the other.
    @Test func twoMCPServersBehindOneAuthorizationServerKeepWorking() throws {
        let p = try Provider(script: "mcp_server.py", arguments: ["--split", "--mcp", "mcp", "--mcp", "mcp", "--require-resource"])
        defer { p.stop() }
        try #require(p.readyWords.count == 2)
        let (one, two) = (p.readyWords[0], p.readyWords[1])
        let box = try Self.machine(p)
        for url in [one, two] {
            let login = try box.signin("login", "--resource", url, "--timeout", "30")
            #expect(login.status == 0, "\(login.stdout) \(login.stderr)")
        }
        for (url, name) in [(one, "mcp-1"), (two, "mcp-2")] {
            let (run, answer) = try Self.mcpClient(box, url)
            #expect(run.status == 0 && answer["server"] as? String == name, "\(url): \(run.stdout) \(run.stderr)")
        }
        // A token for one is refused by the other (each server checks its tokens were issued for it).
        let tokenOne = try box.signin("token", "--resource", one).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let crossed = try Subprocess.run("/usr/bin/curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST", "-H", "Authorization: Bearer \(tokenOne)", two])
        #expect(crossed.stdout == "401", "\(crossed.stdout)")
        let accounts = try box.signin("accounts")
        #expect(accounts.stdout.contains("the API \(one)") && accounts.stdout.contains("the API \(two)"), "\(accounts.stdout)")
        let logout = try box.signin("logout", "--resource", one, "--yes")
        #expect(logout.status == 0, "\(logout.stderr)")
        let (still, answer) = try Self.mcpClient(box, two)
        #expect(still.status == 0 && answer["server"] as? String == "mcp-2", "\(still.stdout) \(still.stderr)")
    }

    /// A 403 `insufficient_scope` (RFC 6750 3.1): the server now requires `admin` too. The SDK's client fails with the
    /// held token; a second `login --resource URL` asks the API again (presenting that token), signs in for the held
    /// scopes and the named ones, and the client works.
    @Test func insufficientScopeIsSteppedUpByASecondLogin() throws {
        let p = try Provider(script: "mcp_server.py", arguments: ["--split", "--mcp", "mcp"])
        defer { p.stop() }
        let url = try #require(p.readyWords.first)
        let box = try Self.machine(p)
        let login = try box.signin("login", "--resource", url, "--timeout", "30")
        #expect(login.status == 0, "\(login.stderr)")
        _ = try p.http("POST", "/_require", body: Data(#"["admin"]"#.utf8))
        let (refused, _) = try Self.mcpClient(box, url)
        #expect(refused.status != 0, "the held token lacks admin: \(refused.stdout)")
        let stepUp = try box.signin("login", "--resource", url, "--timeout", "30")
        #expect(stepUp.status == 0, "\(stepUp.stdout) \(stepUp.stderr)")
        let stepped = try Self.stats(p)
        #expect((stepped["authorize"] as? [String: Any])?["scopes"] as? [String] == ["admin", "mcp"], "\(stepped)")
        let status = try box.signin("status", "--resource", url)
        #expect(status.stdout.contains("Granted scopes: admin mcp"), "\(status.stdout)")
        let (run, answer) = try Self.mcpClient(box, url)
        #expect(run.status == 0 && answer["sum"] as? String == "5", "\(run.stdout) \(run.stderr)")
        let final = try Self.stats(p)
        #expect(final["registrations"] as? Int == 1, "the client registered once covers the step-up: \(final)")
    }

    /// A restarted server (its registrations, grants and sessions in memory, all forgotten): a refresh fails
    /// `invalid_client`, said as what it is (exit 3, the `login --resource` that mends it, no configuration file
    /// named); `login --resource` finds out before any browser, registers again and signs in; `logout --resource`
    /// forgets the registration with the grant, so the next sign-in registers anew.
    @Test func aRestartedServerIsRegisteredAtAgainAndLogoutForgetsTheRegistration() throws {
        let p = try Provider(script: "mcp_server.py")
        defer { p.stop() }
        let url = try #require(p.readyWords.first)
        let box = try Self.machine(p)
        #expect(try box.signin("login", "--resource", url, "--timeout", "30").status == 0)
        _ = try p.http("POST", "/_restart")
        let refused = try box.signin("token", "--resource", url, "--force-refresh")
        #expect(refused.status == 3 && refused.stderr.contains("signin login --resource \(url)") && !refused.stderr.contains("config.json"),
                "\(refused.status) \(refused.stderr)")
        let again = try box.signin("login", "--resource", url, "--timeout", "30")
        #expect(again.status == 0, "\(again.stdout) \(again.stderr)")
        #expect(try Self.stats(p)["registrations"] as? Int == 2, "registered again at the restarted server")
        let (run, answer) = try Self.mcpClient(box, url)
        #expect(run.status == 0 && answer["sum"] as? String == "5", "\(run.stdout) \(run.stderr)")
        let logout = try box.signin("logout", "--resource", url, "--yes")
        #expect(logout.status == 0 && logout.stdout.contains("Forgot the API's registration"), "\(logout.stdout) \(logout.stderr)")
        #expect(!(try box.signin("accounts").stdout.contains(url)), "nothing kept for the API")
        // The last account went, and with it the store key: nothing is left in the folder (the API's records, sealed
        // with that key, were once left behind, unreadable, while the logout said they were forgotten).
        #expect(!FileManager.default.fileExists(atPath: box.storeDir), "\((try? FileManager.default.contentsOfDirectory(atPath: box.storeDir)) ?? [])")
        #expect(try box.signin("login", "--resource", url, "--timeout", "30").status == 0)
        #expect(try Self.stats(p)["registrations"] as? Int == 3, "a new registration after the logout")
    }

    /// Only API sign-ins, no configuration: one API sign-in is the current sign-in for plain `whoami`, `status`,
    /// `token` and `logout`; with two, a command that needs one names both and `--resource`; `logout --all` signs every
    /// API out.
    @Test func apiSignInsAloneAreAccountsInEveryCommand() throws {
        let p = try Provider(script: "mcp_server.py", arguments: ["--split", "--mcp", "mcp", "--mcp", "mcp"])
        defer { p.stop() }
        let (one, two) = (p.readyWords[0], p.readyWords[1])
        let box = try Self.machine(p)
        box.environment["SIGNIN_CONFIG"] = nil
        #expect(try box.signin("login", "--resource", one, "--timeout", "30").status == 0)
        let whoami = try box.signin("whoami")
        #expect(whoami.status == 0 && whoami.stdout.contains(one), "\(whoami.stdout) \(whoami.stderr)")
        let status = try box.signin("status")
        #expect(status.status == 0 && status.stdout.contains("API: \(one)"), "\(status.stdout) \(status.stderr)")
        let token = try box.signin("token")
        let named = try box.signin("token", "--resource", one)
        #expect(token.status == 0 && token.stdout == named.stdout, "\(token.stderr)")
        #expect(try box.signin("login", "--resource", two, "--timeout", "30").status == 0)
        let which = try box.signin("whoami")
        #expect(which.status == 2 && which.stderr.contains(one) && which.stderr.contains(two) && which.stderr.contains("--resource"), "\(which.stderr)")
        let use = try box.signin("use", two)
        #expect(use.status == 0 && use.stdout.contains("Now using the API \(two)"), "\(use.stdout) \(use.stderr)")
        let chosen = try box.signin("whoami")
        #expect(chosen.status == 0 && chosen.stdout.contains(two) && !chosen.stdout.contains(one), "\(chosen.stdout) \(chosen.stderr)")
        let all = try box.signin("logout", "--all", "--yes")
        #expect(all.status == 0 && all.stdout.contains(one) && all.stdout.contains(two), "\(all.stdout) \(all.stderr)")
        #expect(try box.signin("token", "--resource", one).status == 3)
        #expect(!(try box.signin("accounts").stdout.contains(two)))
    }

    /// A second `login --resource URL` while one waits in the browser on the client's registered redirect port: said
    /// as what it is, and `--port` (which that server would refuse) is not advised.
    @Test func aSecondSignInWhileOneWaitsSaysSo() throws {
        let p = try Provider(script: "mcp_server.py")
        defer { p.stop() }
        let url = try #require(p.readyWords.first)
        let box = try Self.machine(p)
        #expect(try box.signin("login", "--resource", url, "--timeout", "30").status == 0)
        // Long enough to be still waiting under the sanitizers when the second one starts.
        let waiting = try ParallelRun(box, ["login", "--resource", url, "--timeout", "12"], env: ["STANDIN_MODE": "none"])
        #expect(box.waitForStandinSteps(3).filter { $0["step"] as? String == "fds" }.count >= 2, "the first sign-in's browser opened")
        let second = try box.signin("login", "--resource", url, "--timeout", "30")
        #expect(second.status != 0 && second.stderr.contains("another sign-in to this API is most likely waiting") && !second.stderr.contains("--port"),
                "\(second.stderr)")
        _ = try waiting.wait()
    }
}
