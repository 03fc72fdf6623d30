import Testing
@testable import SignInMCP
import SignInBase

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

    /// What a server sends is checked whole, as a client's line is: the eighth review's `nonsense`, `NaN`, `[1,,2]`,
    /// a NUL byte, ESC, `"result":tru` and broken UTF-8 never become a message handed to the client.
    @Test func aServersMessageThatIsNotJSONIsNoMessage() {
        let bad = [#"{"jsonrpc":"2.0","id":1,"result":nonsense}"#, #"{"jsonrpc":"2.0","id":1,"result":NaN}"#,
                   #"{"jsonrpc":"2.0","id":1,"result":[1,,2]}"#, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"a\u{0}b\"}",
                   "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"\u{1B}[2J\"}", "{\"jsonrpc\":\"2.0\",\"id\":1,\u{0}\"result\":1}",
                   #"{"jsonrpc":"2.0","id":1,"result":tru}"#, #"{"jsonrpc":"2.0","id":1,"result":{"a":1,}}"#,
                   #"{"jsonrpc":"2.0","id":1,"result":01}"#, #"{"jsonrpc":"2.0","id":1,"result":"\x"}"#, #"[{"id":1,"method":"m"},]"#,
                   #"{"jsonrpc":"2.0","id":1,"result":1.}"#, #"{"jsonrpc":"2.0","id":1,"result":{"a" 1}}"#]
        for s in bad { #expect(Self.kind(s) == nil, "\(s.debugDescription)") }
        let broken: [UInt8] = Array(#"{"jsonrpc":"2.0","id":1,"result":""#.utf8) + [0xC3, 0x28] + Array(#""}"#.utf8)
        #expect(JSONRPCMessage(broken) == nil, "not UTF-8")
        let good = [#"{"jsonrpc":"2.0","id":1,"result":{"n":-1.5e+3,"t":true,"f":false,"z":null,"s":"\u00e9\n","a":[[],{}]}}"#,
                    "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"h\u{E9}\u{1F600}\"}"]
        for s in good { #expect(Self.kind(s) == .response(id: .init(json: "1")), "\(s)") }
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

    /// An endpoint is on the stream's origin only with the same scheme, host and port (the default port filled in);
    /// user information puts it on none.
    @Test func originsAreComparedAsRFC6454Says() {
        #expect(EndpointURL.sameOrigin("https://A.example/x", "https://a.example:443/y"))
        #expect(EndpointURL.sameOrigin("http://127.0.0.1:8/messages/?s=1", "http://127.0.0.1:8/sse"))
        for other in ["http://localhost:8/m", "http://127.0.0.1:9/m", "https://127.0.0.1:8/m", "http://127.0.0.1:8@evil.example/m",
                      "http://user@127.0.0.1:8/m", "ftp://127.0.0.1:8/m", "/messages"] {
            #expect(!EndpointURL.sameOrigin(other, "http://127.0.0.1:8/sse"), "\(other)")
        }
    }
}
