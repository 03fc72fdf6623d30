import Testing
@testable import SignInMCP

/// What the transports read of a JSON-RPC message from its top level alone, and the bridge's lines.
@Suite struct JSONRPCMessageTests {
    static func kind(_ s: String, checked: Bool = false) -> JSONRPCMessage.Kind? { JSONRPCMessage(Array(s.utf8), checked: checked)?.kind }

    @Test func kindsAndIdsComeFromTheTopLevel() {
        #expect(Self.kind(#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"id":"inner","method":"x"}}"#) == .request(id: .init(json: "7"), method: "tools/call"))
        #expect(Self.kind(#"{"jsonrpc":"2.0","id":"a-1","method":"ping"}"#) == .request(id: .init(json: #""a-1""#), method: "ping"))
        #expect(Self.kind(#"{"method":"notifications/progress","params":{"result":1},"jsonrpc":"2.0"}"#) == .notification(method: "notifications/progress"))
        #expect(Self.kind(#"{"jsonrpc":"2.0","result":{"content":[{"text":"}{\"id\":9"}]},"id":3}"#) == .response(id: .init(json: "3")))
        #expect(Self.kind(#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}"#) == .response(id: nil))
        #expect(Self.kind(#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#) == .batch)
    }

    @Test func whatIsNotAMessageIsNil() {
        for s in [#"{"jsonrpc":"2.0"}"#, "not json", "{}", #"{"id":{"x":1},"method":"m"}"#, #"{"method":7}"#, #"{"id":1,"method":"m""#, "null"] {
            #expect(Self.kind(s) == nil, "\(s)")
        }
        #expect(Self.kind(#"{"id":1,"method":"m","x":[1,2}"#, checked: true) == nil, "a client's line is checked whole")
    }

    @Test func lineBreaksBetweenTokensBecomeSpacesAndErrorsAreOneLine() {
        let m = JSONRPCMessage(Array("{\n \"jsonrpc\": \"2.0\",\r\n \"id\": 1, \"result\": {\"text\": \"a\\nb\"}\n}".utf8))
        #expect(m?.text.contains("\n") == false && m?.text.contains("a\\nb") == true)
        let e = JSONRPCMessage.error(id: .init(json: #""x""#), code: -32000, message: "line\none \"quoted\"")
        #expect(e.text == #"{"jsonrpc":"2.0","id":"x","error":{"code":-32000,"message":"line\none \"quoted\""}}"#)
    }

    @Test func anEndpointEventIsResolvedAgainstTheStream() {
        #expect(MCPClientTransport.resolve("/messages/?session_id=1", against: "http://127.0.0.1:8/sse") == "http://127.0.0.1:8/messages/?session_id=1")
        #expect(MCPClientTransport.resolve("messages?s=1", against: "https://a.example/mcp/sse?x=1") == "https://a.example/mcp/messages?s=1")
        #expect(MCPClientTransport.resolve("https://b.example/post", against: "https://a.example/sse") == "https://b.example/post")
    }
}
