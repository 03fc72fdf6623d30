import Foundation
import Testing

/// SignInKit as the OAuth layer of a Swift MCP client (Examples/mcp-client on `APIAuthorizer`), against
/// the MCP Python SDK's server: silent restore of the `signin` command's sign-in, a refresh and one retry on a 401,
/// a step-up on a 403 `insufficient_scope` when allowed and a typed error when not, and its own sign-in when allowed.
@Suite struct SwiftMCPClientTests {
    static func run(_ box: Sandbox, _ url: String, signIn: Bool = false) throws -> (RunResult, [String: Any]) {
        let r = try Subprocess.run(Paths.built("signin-mcp-client"), [url] + (signIn ? ["--sign-in"] : []), env: box.environment.filter { !$0.value.isEmpty })
        return (r, TokensForEveryAPITests.json(r.stdout.split(separator: "\n").last.map(String.init) ?? ""))
    }

    @Test func theSwiftMCPClientRestoresRefreshesStepsUpAndSaysWhyNot() throws {
        let p = try Provider(script: "mcp_server.py", arguments: ["--require-resource"])
        defer { p.stop() }
        let url = try #require(p.readyWords.first)
        let box = try MCPServerTests.machine(p)
        // Not signed in, no sign-in allowed: a typed error, no browser.
        let (none, _) = try Self.run(box, url)
        #expect(none.status == 1 && none.stderr.contains("signin login --resource \(url)"), "\(none.stdout) \(none.stderr)")
        #expect(box.standinSteps().isEmpty, "no browser was opened")
        // Signed in by the command: the program restores it silently.
        #expect(try box.signin("login", "--resource", url, "--timeout", "30").status == 0)
        let (first, answer) = try Self.run(box, url)
        #expect(first.status == 0 && answer["sum"] as? String == "5" && Set(answer["tools"] as? [String] ?? []).isSuperset(of: ["add", "server_name"]), "\(first.stdout) \(first.stderr)")
        #expect(first.stderr.isEmpty, "nothing on the program's standard error: \(first.stderr)")
        // Every token the server issued ends: a 401, a refresh, one retry.
        _ = try p.http("POST", "/_forget")
        let before = try MCPServerTests.stats(p)["refreshes"] as? Int ?? 0
        let (refreshed, again) = try Self.run(box, url)
        #expect(refreshed.status == 0 && again["sum"] as? String == "5", "\(refreshed.stdout) \(refreshed.stderr)")
        #expect(try MCPServerTests.stats(p)["refreshes"] as? Int == before + 1)
        // The server now requires `admin`: without a sign-in allowed, the scopes it needs, typed; with one, a step-up.
        _ = try p.http("POST", "/_require", body: Data(#"["admin"]"#.utf8))
        let (refused, _) = try Self.run(box, url)
        #expect(refused.status == 1 && refused.stderr.contains("needs: admin\n"), "only the scope not held: \(refused.stdout) \(refused.stderr)")
        let (stepped, stepAnswer) = try Self.run(box, url, signIn: true)
        #expect(stepped.status == 0 && stepAnswer["sum"] as? String == "5", "\(stepped.stdout) \(stepped.stderr)")
        let status = try box.signin("status", "--resource", url)
        #expect(status.stdout.contains("Granted scopes: admin mcp"), "\(status.stdout)")
    }

    @Test func theSwiftMCPClientSignsInItselfWhenAllowedThenRestores() throws {
        let p = try Provider(script: "mcp_server.py", arguments: ["--split", "--mcp", "mcp"])
        defer { p.stop() }
        let url = try #require(p.readyWords.first)
        let box = try MCPServerTests.machine(p)
        let (signedIn, answer) = try Self.run(box, url, signIn: true)
        #expect(signedIn.status == 0 && answer["sum"] as? String == "5", "\(signedIn.stdout) \(signedIn.stderr)")
        let steps = box.standinSteps().count
        let (restored, again) = try Self.run(box, url)
        #expect(restored.status == 0 && again["sum"] as? String == "5", "\(restored.stdout) \(restored.stderr)")
        #expect(box.standinSteps().count == steps, "the next run restores: no browser")
        let whoami = try box.signin("whoami", "--resource", url)
        #expect(whoami.status == 0, "the command sees the program's sign-in: \(whoami.stderr)")
    }
}
