import SignInKit

/// `signin client-metadata [--url URL]`: the client ID metadata document to host at URL, so that servers that take
/// such documents (the Model Context Protocol's preferred way, draft-ietf-oauth-client-id-metadata-document) know
/// signin by that URL with no registration.
struct ClientMetadata: SignInCommand {
    static let urlOption = OptionSpec("--url", value: "URL", "Where the document will be hosted (an https URL with a path): its client_id")
    static let spec = CommandSpec(
        of: Self.self, options: [ClientMetadata.urlOption], summary: "Print the client ID metadata document to host for signin (no network)",
        details: """
            Prints the JSON document to host at --url (else at the configuration's client_id_metadata_document): its
            client_id is that URL, its redirect URIs the loopback ones signin listens on (any port), no secret. With
            client_id_metadata_document set (or $SIGNIN_CLIENT_ID_METADATA_DOCUMENT), a sign-in found from an API's
            address uses the URL as signin's client_id wherever the server says client_id_metadata_document_supported,
            and registers nothing there.
            """,
        readsConfiguration: false)

    let url: String?

    init(_ a: Arguments, _ env: [String: String]) throws(UsageError) {
        url = a.value(Self.urlOption)
        if let url, let problem = Self.problem(url) {
            throw UsageError("--url \(url.withoutControlCharacters) \(problem)")
        }
    }

    /// Why `url` cannot be a client ID metadata document's address (the draft: an https URL with a path, no fragment;
    /// http only to this machine, for tests), or nil.
    static func problem(_ url: String) -> String? {
        if let p = EndpointURL.problem(url) { return "must be an https URL (where the document will be hosted): \(p)" }
        if url.contains("#") { return "must have no fragment (the document's client_id is the URL itself)" }
        guard let origin = EndpointURL.origin(of: url), url.dropFirst(origin.count).count > 1 else {
            return "must have a path (https://example.org/signin/client.json)"
        }
        return nil
    }

    func run(_ r: CommandRun) throws -> ExitCode {
        let (env, io) = (r.environment, r.io)
        let configured = (try? SignInConfiguration.load(path: r.session.configurationPath))?.clientIDMetadataDocument
        guard let url = url ?? configured ?? env["SIGNIN_CLIENT_ID_METADATA_DOCUMENT"].flatMap({ $0.isEmpty ? nil : $0 }) else {
            throw UsageError("say where the document will be hosted: signin client-metadata --url https://example.org/signin/client.json")
        }
        io.out(ClientIDMetadataDocument.document(for: url))
        return .success
    }
}
