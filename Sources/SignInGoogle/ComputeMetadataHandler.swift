import SignInBase
import SignInProtocol
import SignInStorage
import SignInTransport
import SignInGrant
import FoundationEssentials

/// What the metadata handler serves, asked per request (so a sign-out or a refresh elsewhere shows at once).
protocol ComputeMetadataSource {
    /// The e-mail the tools see as the account (the person's, or the impersonated service account's).
    func email() throws(SignInError) -> String
    /// The scopes the tokens carry.
    func scopes() throws(SignInError) -> [String]
    /// An access token with `scopes` (nil: the default ones).
    func accessToken(scopes: [String]?) throws(SignInError) -> IssuedToken
    /// An ID token for `audience`; `full`: with the e-mail claim (the API's `format=full`).
    func idToken(audience: String, full: Bool) throws(SignInError) -> SignInToken
    /// The project's ID, nil when none is configured.
    func projectID() -> String?
    /// The project's number, nil when it is not known.
    func numericProjectID() throws(SignInError) -> String?
}

/// The Google Compute Engine metadata server's HTTP interface (`computeMetadata/v1`), as much of it as the Google
/// tools read for credentials, with the real server's manners: every answer carries `Metadata-Flavor: Google`;
/// a request without that header is refused (403), as is one relayed by a proxy (`X-Forwarded-For`); text is
/// `application/text`, JSON `application/json`; what it does not have is a 404.
struct ComputeMetadataHandler {
    /// What happened on a request, for the log and for what the person should do.
    enum Outcome: Equatable {
        case served
        case refused(reason: String)
        case notFound
        /// Something the account cannot have (a scope, an audience), which the source has reported itself.
        case declined
        case failed(SignInError)
    }

    let source: any ComputeMetadataSource

    static let flavor = ("Metadata-Flavor", "Google")

    static func text(_ status: String, _ body: String) -> LoopbackResponse {
        .text(status, body, contentType: "application/text", headers: [flavor])
    }

    static func json(_ body: String) -> LoopbackResponse {
        .text("200 OK", body, contentType: "application/json", headers: [flavor])
    }

    static func jsonError(_ status: String, _ code: String, _ description: String) -> LoopbackResponse {
        .text(status, JSONValueOut.object(["error": .string(code), "error_description": .string(description)]).text, contentType: "application/json", headers: [flavor])
    }

    /// The server's own refusals (wrong method, host, malformed), worded as the metadata server's.
    static func refusal(_ status: String) -> LoopbackResponse { text(status, status + "\n") }

    func answer(_ r: HTTPRequestHead) -> (LoopbackResponse, Outcome) {
        // A web page can send neither header without a CORS preflight, which this server refuses (OPTIONS: 405).
        guard r.header("metadata-flavor")?.lowercased() == "google" else {
            return (Self.text("403 Forbidden", "Missing required header \"Metadata-Flavor\": \"Google\"\n"), .refused(reason: "no Metadata-Flavor: Google header"))
        }
        guard r.header("x-forwarded-for") == nil else {
            return (Self.text("403 Forbidden", "Request denied: it carries X-Forwarded-For (relayed by a proxy)\n"), .refused(reason: "relayed by a proxy (X-Forwarded-For)"))
        }
        let query = FormEncoding.decode(r.query) ?? [:]
        do throws(SignInError) {
            if let response = try route(r.path, query) { return (response, .served) }
            return (Self.text("404 Not Found", "Not found\n"), .notFound)
        } catch .unsupported(let reason) {
            // gcloud asks for an ID token for its own client on every run and goes on after a 404 (not a 400).
            let status = r.path.hasSuffix("/identity") ? "404 Not Found" : "400 Bad Request"
            return (Self.jsonError(status, status.hasPrefix("404") ? "not_found" : "invalid_scope", reason), .declined)
        } catch {
            // The project number is looked up only when the configuration lacks it: a failed lookup says how to skip it.
            let advice = r.path.hasSuffix("/numeric-project-id") ? Self.projectNumberAdvice : ""
            return (Self.failureResponse(error, advice: advice), .failed(error))
        }
    }

    /// What the project number's lookup failing asks of the person: the lookup is needed only without it.
    static let projectNumberAdvice = "; set \"project_number\" in signin's configuration (the number is looked up only when it is missing)"

    /// The answer to a request that failed with `e`; `advice` follows the sentence of a provider or network failure.
    static func failureResponse(_ e: SignInError, advice: String = "") -> LoopbackResponse {
        switch e {
        case .unsupported(let reason): return jsonError("400 Bad Request", "invalid_request", reason)
        case .noPreviousSignIn(let reason): return jsonError("503 Service Unavailable", "not_signed_in", "signin has no sign-in to serve: \(reason.description)")
        case .providerError(let endpoint, let code, _): return jsonError("502 Bad Gateway", code, "the \(endpoint) refused; see signin's output" + advice)
        case .networkUnavailable(let endpoint, _): return jsonError("502 Bad Gateway", "unavailable", "signin could not reach the \(endpoint)" + advice)
        default: return jsonError("500 Internal Server Error", "internal", e.description)
        }
    }

    private func route(_ rawPath: String, _ query: [String: String]) throws(SignInError) -> LoopbackResponse? {
        var path = rawPath
        while path.contains("//") { path = path.replacing("//", with: "/") }
        let recursive = query["recursive"]?.lowercased() == "true"
        switch path {
        case "/": return Self.text("200 OK", "computeMetadata/\n")
        case "/computeMetadata/", "/computeMetadata": return Self.text("200 OK", "v1/\n")
        case "/computeMetadata/v1/", "/computeMetadata/v1": return Self.text("200 OK", "instance/\nproject/\nuniverse/\n")
        case "/computeMetadata/v1/project/project-id":
            return source.projectID().map { Self.text("200 OK", $0) }
        case "/computeMetadata/v1/project/numeric-project-id":
            do {
                return try source.numericProjectID().map { Self.text("200 OK", $0) }
            } catch .networkUnavailable(let endpoint, let detail) {
                throw .networkUnavailable(endpoint: endpoint, detail: detail + Self.projectNumberAdvice)
            } catch .providerError(let endpoint, let code, let detail) {
                throw .providerError(endpoint: endpoint, code: code, detail: (detail ?? "") + Self.projectNumberAdvice)
            }
        case "/computeMetadata/v1/project/", "/computeMetadata/v1/project":
            guard source.projectID() != nil else { return nil }
            return Self.text("200 OK", "numeric-project-id\nproject-id\n")
        case "/computeMetadata/v1/universe/universe-domain":
            return Self.text("200 OK", "googleapis.com")
        case "/computeMetadata/v1/instance/service-accounts/", "/computeMetadata/v1/instance/service-accounts":
            let email = try source.email()
            if recursive {
                let document = try accountDocument(email)
                return Self.json(JSONValueOut.object([email: document, "default": document]).text)
            }
            return Self.text("200 OK", "\(email)/\ndefault/\n")
        default:
            break
        }
        let prefix = "/computeMetadata/v1/instance/service-accounts/"
        guard path.hasPrefix(prefix) else { return nil }
        let rest = path.dropFirst(prefix.count)
        let parts = rest.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count <= 2, let name = parts.first.map(String.init) else { return nil }
        let email = try source.email()
        guard name == "default" || name.lowercased() == email.lowercased() else { return nil }
        let leaf = parts.count == 2 ? String(parts[1]) : ""
        switch leaf {
        case "":
            if recursive { return Self.json(try accountDocument(email).text) }
            return Self.text("200 OK", "aliases\nemail\nidentity\nscopes\ntoken\n")
        case "email": return Self.text("200 OK", email)
        case "aliases": return Self.text("200 OK", "default\n")
        case "scopes": return Self.text("200 OK", try source.scopes().joined(separator: "\n") + "\n")
        case "token":
            let asked = query["scopes"].map { $0.split(whereSeparator: { $0 == "," || $0 == " " }).map(String.init) }.flatMap { $0.isEmpty ? nil : $0 }
            let issued = try source.accessToken(scopes: asked)
            // Google's libraries send what they are given as `Bearer`: a DPoP-bound token is refused, not leaked.
            let (type, value) = try issued.presented(to: .bearerOnly("the metadata server (Google's libraries send its tokens as Bearer)"))
            let seconds = max(0, Int((issued.token.expirationDate?.timeIntervalSinceNow ?? 3600).rounded(.down)))
            return Self.json(JSONValueOut.object(["access_token": .string(value), "expires_in": .int(seconds), "token_type": .string(type)]).text)
        case "identity":
            guard let audience = query["audience"], !audience.isEmpty else {
                return Self.jsonError("400 Bad Request", "invalid_request", "identity needs ?audience=")
            }
            let token = try source.idToken(audience: audience, full: query["format"]?.lowercased() == "full")
            return Self.text("200 OK", token.value)
        default:
            return nil
        }
    }

    /// `.../{account}/?recursive=true`: what the real server says of a service account.
    private func accountDocument(_ email: String) throws(SignInError) -> JSONValueOut {
        .object(["aliases": .strings(["default"]), "email": .string(email), "scopes": .strings(try source.scopes())])
    }
}
