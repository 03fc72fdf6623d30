import SignInBase

/// Entry points for the fuzzers (`Fuzz/`), through SPI so they are not API: what a server's stream and a client's
/// lines reach, each with bytes of the fuzzer's choosing.
@_spi(Fuzzing) public enum MCPFuzzTargets {
    /// A server's event stream, fed in pieces the first byte chooses, and each event's data scanned as a message;
    /// the same bytes as a client's line (checked whole) and as a server's message (scanned).
    public static func streamAndMessages(_ bytes: [UInt8]) {
        var parser = ServerSentEvents(limit: 1 << 16)
        let step = max(1, Int(bytes.first ?? 1) % 64)
        var i = 0
        while i < bytes.count {
            let piece = Array(bytes[i..<min(bytes.count, i + step)])
            piece.withUnsafeBytes { parser.feed($0) { event in
                if let m = JSONRPCMessage(event.bytes) { _ = m.requestID; _ = m.method; _ = m.member("params") }
            } }
            i += step
        }
        if let m = JSONRPCMessage(bytes, checked: true) { _ = m.text; _ = m.kind }
        _ = JSONRPCMessage(bytes)
        _ = MCPClientTransport.resolve(String(decoding: bytes.prefix(200), as: UTF8.self), against: "https://mcp.example/sse")
    }
}
