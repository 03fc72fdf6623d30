import Foundation
import Testing

/// Debian's docker-registry with token authentication, where the project's token server takes the password only
/// if the test provider accepts it as an access token; skopeo (no daemon) asks `docker-credential-signin`.
final class TokenAuthRegistry: @unchecked Sendable {
    let tokenServer: Provider
    let registry: Provider
    var host: String { "127.0.0.1:\(registry.port)" }

    init(issuer: String, folder: URL) throws {
        let root = folder.appendingPathComponent("registry-root.pem").path
        tokenServer = try Provider(script: "registry_token_server.py", arguments: [issuer, root])
        registry = try Provider(script: "registry.py", arguments: ["http://127.0.0.1:\(tokenServer.port)/token", root, folder.appendingPathComponent("registry").path])
    }

    func stats() throws -> [String: Any] {
        let r = try Subprocess.run("/usr/bin/curl", ["-s", "http://127.0.0.1:\(tokenServer.port)/_stats"])
        return (try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]) ?? [:]
    }

    deinit {
        registry.stop()
        tokenServer.stop()
    }
}
