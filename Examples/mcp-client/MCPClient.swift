// An MCP client on SignInKit: JSON-RPC over the Model Context Protocol's streamable HTTP transport (initialize,
// tools/list, tools/call), the standard library, Foundation's URLSession and SignInKitURLSession only. Its OAuth is
// `APIAuthorizer`: the headers of each request, a refresh and one retry on a 401, a sign-in where the server's
// challenge says (when allowed), a step-up on a 403 `insufficient_scope`.
//   signin-mcp-client URL [--sign-in]      prints {"tools": [...], "sum": "5"} as one line; exit 1 with the error
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import SignInKit
import SignInKitURLSession

struct MCPClient {
    let url: URL
    let authorizer: APIAuthorizer
    var session: String?
    var nextID = 1

    /// One JSON-RPC request (or a notification, without an id); the result, from a JSON or an event-stream answer.
    mutating func call(_ method: String, _ params: [String: Any] = [:], notification: Bool = false) async throws -> [String: Any] {
        var message: [String: Any] = ["jsonrpc": "2.0", "method": method, "params": params]
        if !notification { message["id"] = nextID; nextID += 1 }
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.httpBody = try JSONSerialization.data(withJSONObject: message)
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue("application/json, text/event-stream", forHTTPHeaderField: "Accept")
        request.setValue("2025-06-18", forHTTPHeaderField: "MCP-Protocol-Version")
        if let session { request.setValue(session, forHTTPHeaderField: "Mcp-Session-Id") }
        let (data, response) = try await authorizer.perform(request)
        if let id = response.value(forHTTPHeaderField: "Mcp-Session-Id") { session = id }
        guard (200..<300).contains(response.statusCode) else { throw ClientError("\(method): HTTP \(response.statusCode)") }
        if notification { return [:] }
        var body = String(decoding: data, as: UTF8.self)
        // An event stream: the message is the data of an event.
        if let line = body.split(whereSeparator: \.isNewline).first(where: { $0.hasPrefix("data:") }) { body = String(line.dropFirst(5)) }
        body = body.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let answer = try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any] else { throw ClientError("\(method): not JSON-RPC") }
        if let error = answer["error"] as? [String: Any] { throw ClientError("\(method): \(error["message"] ?? error)") }
        return answer["result"] as? [String: Any] ?? [:]
    }
}

struct ClientError: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}

@main struct Main {
    static func main() async {
        let arguments = CommandLine.arguments.dropFirst()
        guard let address = arguments.first, let url = URL(string: address) else {
            FileHandle.standardError.write(Data("usage: signin-mcp-client URL [--sign-in]\n".utf8))
            exit(2)
        }
        let authorizer = APIAuthorizer(resource: address, allowsInteractiveSignIn: arguments.contains("--sign-in"))
        var client = MCPClient(url: url, authorizer: authorizer)
        do {
            _ = try await client.call("initialize", ["protocolVersion": "2025-06-18", "capabilities": [String: Any](), "clientInfo": ["name": "signin-mcp-client", "version": "1"]])
            _ = try await client.call("notifications/initialized", notification: true)
            let tools = (try await client.call("tools/list")["tools"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }.sorted()
            let sum = try await client.call("tools/call", ["name": "add", "arguments": ["a": 2, "b": 3]])
            let text = (sum["content"] as? [[String: Any]] ?? []).compactMap { $0["text"] as? String }.joined()
            let line = try JSONSerialization.data(withJSONObject: ["tools": tools, "sum": text], options: [.sortedKeys])
            print(String(decoding: line, as: UTF8.self))
        } catch let error as SignInError {
            // A typed error a program can switch on; a sentence for a person, never a token.
            FileHandle.standardError.write(Data("signin-mcp-client: \(error)\n".utf8))
            if case .scopesNotGranted(let missing) = error { FileHandle.standardError.write(Data("needs: \(missing.joined(separator: " "))\n".utf8)) }
            exit(1)
        } catch {
            FileHandle.standardError.write(Data("signin-mcp-client: \(error)\n".utf8))
            exit(1)
        }
    }
}
