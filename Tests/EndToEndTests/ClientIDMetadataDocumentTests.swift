import Foundation
import Testing

/// A client ID metadata document (the MCP authorization's preferred registration since 2025-11-25): where the server
/// says `client_id_metadata_document_supported`, the configured document's URL is signin's `client_id` and nothing is
/// registered; `signin client-metadata` prints the document to host.
@Suite struct ClientIDMetadataDocumentTests {
    /// A strict provider of its own that takes client ID metadata documents.
    static func documentProvider() throws -> Provider {
        try Provider(script: "strict_provider.py", environment: ["STRICT_DISCOVERY": #"{"client_id_metadata_document_supported": true}"#])
    }

    /// The document `signin client-metadata` prints for `name`, hosted at `p` (`/documents/NAME`): its URL, and what
    /// the command printed.
    static func host(_ name: String, at p: Provider, _ box: Sandbox) throws -> (url: String, printed: RunResult) {
        let url = p.issuer + "/documents/" + name
        let printed = try box.signin(["client-metadata", "--url", url], env: ["SIGNIN_CONFIG": ""])
        _ = try p.http("POST", "/_documents/" + name, body: Data(printed.stdout.utf8))
        return (url, printed)
    }

    @Test func aServerTakingDocumentsGetsTheDocumentsURLAsClientIDAndNoRegistration() throws {
        let p = try Self.documentProvider()
        defer { p.stop() }
        let box = try Sandbox(issuer: p.issuer)
        box.environment["SIGNIN_CONFIG"] = ""
        let (url, printed) = try Self.host("signin.json", at: p, box)
        #expect(printed.status == 0, "\(printed.stderr)")
        let document = TokensForEveryAPITests.json(printed.stdout)
        #expect(document["client_id"] as? String == url && document["token_endpoint_auth_method"] as? String == "none", "\(printed.stdout)")
        box.environment["SIGNIN_CLIENT_ID_METADATA_DOCUMENT"] = url
        let api = p.issuer + "/api/orders"
        let login = try box.signin("login", "--resource", api, "--timeout", "30")
        #expect(login.status == 0, "\(login.stdout) \(login.stderr)")
        let stats = try p.stats("_api")
        #expect(stats["registrations"] == nil && stats["documents_used"] as? Int == 1, "\(stats)")
        let token = try box.signin("token", "--resource", api)
        #expect(token.status == 0 && !token.stdout.isEmpty, "\(token.stderr)")
        let status = try box.signin("status", "--resource", api, "--json")
        #expect(TokensForEveryAPITests.json(status.stdout)["client_id"] as? String == url, "\(status.stdout)")
        #expect(TokensForEveryAPITests.json(status.stdout)["client_kind"] as? String == "metadata-document", "\(status.stdout)")
    }

    /// A configuration file holding only `client_id_metadata_document` is valid: API sign-ins use its document, and
    /// with one of them plain commands answer for it.
    @Test func aConfigurationWithOnlyAMetadataDocumentIsValid() throws {
        let p = try Self.documentProvider()
        defer { p.stop() }
        let box = try Sandbox(issuer: p.issuer)
        let (url, _) = try Self.host("only.json", at: p, box)
        try box.writeConfig(["client_id_metadata_document": url])
        let none = try box.signin("whoami")
        #expect(none.status == 2 && none.stderr.contains("signin login --resource URL"), "\(none.stderr)")
        let api = p.issuer + "/api/orders"
        let login = try box.signin("login", "--resource", api, "--timeout", "30")
        #expect(login.status == 0, "\(login.stdout) \(login.stderr)")
        #expect(try p.stats("_api")["documents_used"] as? Int == 1 && (try p.stats("_api")["registrations"]) == nil)
        let whoami = try box.signin("whoami")
        #expect(whoami.status == 0 && whoami.stdout.contains("alice@example.org"), "\(whoami.stdout) \(whoami.stderr)")
    }
}
