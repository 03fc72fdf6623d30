import Testing
@testable import SignInKit
@testable import SignInCLI

/// `signin mcp URL`'s arguments, and `signin client-metadata --url`'s and `login --scope`'s checks.
@Suite struct MCPCommandTests {
    func parse(_ words: [String], _ env: [String: String] = [:]) throws(UsageError) -> any SignInCommand { try parseCommand(words, env) }

    @Test func mcpTakesTheServersURLAndItsOptions() throws {
        let c = try #require(try parse(["mcp", "https://mcp.example/mcp", "--scope", "files:read", "--scope", "files:write admin", "--header", "X-Api-Key: ${KEY}",
                                        "--transport", "sse", "--device", "--timeout", "60"]) as? MCPCommand)
        #expect(c.url == "https://mcp.example/mcp" && c.scopes == ["files:read", "files:write", "admin"] && c.headers == ["X-Api-Key: ${KEY}"])
        #expect(c.transport == .sse && c.device && c.timeout == 60)
        #expect(throws: UsageError.self) { _ = try parse(["mcp"]) }
        #expect(throws: UsageError.self) { _ = try parse(["mcp", "http://evil.example/mcp"]) }
        #expect(throws: UsageError.self) { _ = try parse(["mcp", "https://mcp.example/mcp#x"]) }
        #expect(throws: UsageError.self) { _ = try parse(["mcp", "https://mcp.example/mcp", "--transport", "websocket"]) }
        #expect(throws: UsageError.self) { _ = try parse(["mcp", "https://mcp.example/mcp", "--scope", "bad\"quote"]) }
        #expect(throws: UsageError.self) { _ = try parse(["mcp", "https://mcp.example/mcp", "--header", "no colon"]) }
        #expect(throws: UsageError.self) { _ = try parse(["mcp", "https://mcp.example/mcp", "--header", "X: a\r\nInjected: b"]) }
    }

    @Test func aHeadersVariablesComeFromTheEnvironmentAndAMissingOneIsNamed() throws {
        #expect(try MCPCommand.expand("Authorization: Token ${KEY}-${N}", ["KEY": "k", "N": "1"]) == "Authorization: Token k-1")
        #expect(throws: SignInError.self) { _ = try MCPCommand.expand("X: ${UNSET}", [:]) }
        // A line break from the environment would be a header of the variable's making (an `Authorization` among them).
        for value in ["k\r\nAuthorization: Bearer stolen", "k\nX: y", "k\ry", "k\u{0}"] {
            #expect(throws: SignInError.self, "\(value.debugDescription)") { _ = try MCPCommand.expand("X-Api-Key: ${KEY}", ["KEY": value]) }
        }
    }

    @Test func clientMetadataNeedsAnHTTPSURLWithAPathAndNoFragment() throws {
        #expect(ClientMetadata.problem("https://example.org/signin/client.json") == nil)
        for bad in ["https://example.org/c.json#frag", "https://example.org", "http://example.org/c.json", "httpsx://example.org/c.json", "ftp://example.org/c"] {
            #expect(ClientMetadata.problem(bad) != nil, "\(bad)")
        }
    }

    @Test func loginsScopesAreCheckedAndSplit() throws {
        let l = try #require(try parse(["login", "--resource", "https://mcp.example/mcp", "--scope", "a b", "--scope", "c"]) as? Login)
        #expect(l.addedScopes == ["a", "b", "c"])
        #expect(throws: UsageError.self) { _ = try parse(["login", "--scope", "bad\"quote"]) }
    }
}
