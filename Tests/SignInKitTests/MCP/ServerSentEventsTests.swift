import Testing
@testable import SignInMCP

/// The event stream reader under MCP's HTTP transports: events whole whatever the pieces, the standard's fields.
@Suite struct ServerSentEventsTests {
    static func events(_ pieces: [String], limit: Int = 1 << 20) -> ([ServerSentEvents.Event], ServerSentEvents) {
        var parser = ServerSentEvents(limit: limit)
        var out: [ServerSentEvents.Event] = []
        for p in pieces { Array(p.utf8).withUnsafeBytes { parser.feed($0) { out.append($0) } } }
        return (out, parser)
    }

    @Test func anEventSplitAnywhereComesWhole() {
        let text = "id: 7\r\nevent: message\r\ndata: {\"a\":\r\ndata: 1}\r\n\r\n: keep-alive\n\ndata: two\n\n"
        for cut in 0...text.utf8.count {
            let bytes = Array(text.utf8)
            let (events, parser) = Self.events([String(decoding: bytes[..<cut], as: UTF8.self), String(decoding: bytes[cut...], as: UTF8.self)])
            #expect(events == [.init(type: "message", data: "{\"a\":\n1}", lastEventID: "7"), .init(type: "message", data: "two", lastEventID: "7")], "cut at \(cut)")
            #expect(parser.lastEventID == "7")
        }
    }

    @Test func retryIdAndEventTypesAreKeptAsTheStandardSays() {
        let (events, parser) = Self.events(["retry: 1500\nretry: soon\nevent: endpoint\ndata: /messages/?session_id=1\n\nid\ndata:x\n\n"])
        #expect(parser.retryMilliseconds == 1500, "a retry that is not digits is ignored")
        #expect(events.first == .init(type: "endpoint", data: "/messages/?session_id=1", lastEventID: nil))
        #expect(events.last == .init(type: "message", data: "x", lastEventID: ""), "an empty id resets it; no space after the colon is fine")
    }

    @Test func anEventWithNoDataIsNotDispatchedAndALineTooLongIsRefused() {
        let (none, _) = Self.events(["event: ping\n\n"])
        #expect(none.isEmpty)
        let (_, parser) = Self.events(["data: " + String(repeating: "x", count: 100) + "\n\n"], limit: 50)
        #expect(parser.tooLarge)
    }
}
