import SignInBase
import SignInTransport
import SignInProtocol
import SignInStorage
import FoundationEssentials

/// OAuth 2.0 Dynamic Client Registration (RFC 7591) of signin as a public native client (RFC 8252): one loopback
/// redirect URI, PKCE, no secret (`token_endpoint_auth_method: none`). What the server answered is kept (encrypted,
/// in the store) and reused, with the port it was registered with: some servers match redirect URIs exactly, port
/// included (glewlwyd does, though RFC 8252 7.3 lets the port vary).
package struct ClientRegistration: Sendable, Equatable {
    /// The authorization server (its issuer identifier) the client is registered at.
    package let issuer: String
    package let clientID: String
    /// Present only when the server issued one anyway (it was not asked for).
    package let clientSecret: String?
    /// The loopback port and path of the registered redirect URI.
    package let redirectPort: Int
    package let redirectPath: String
    /// The scopes registered (`scope`), when asked: a server that checks them refuses others at authorization.
    package var scopes: [String]? = nil
    /// Whether the server is an OpenID provider (it issues ID tokens: `openid` among its scopes, a JWKS).
    package var openID: Bool = false
    /// How the client is known there: `registered` (RFC 7591) or `metadataDocument` (its `client_id` is the URL of a
    /// client ID metadata document); kept as the kind's raw value.
    package var kind: ClientIdentity.Kind = .registered
    /// The API this client was registered for, when one: a client per API, so that two APIs behind one server are
    /// two sign-ins side by side (neither drops the other's grant). Nil: a registration kept before, for the server.
    package var resource: String? = nil

    /// The name its record is kept under in the store: the server, and the API when it was registered for one.
    package var recordName: String { CredentialStore.registrationName(issuer: issuer, resource: resource) }

    package static let redirectPath = "/callback"

    /// Registers at `endpoint` with a redirect URI on `port`.
    /// `scopes`: asked as the client's `scope` (a server such as the MCP SDK's refuses, at authorization, a scope the
    /// client did not register).
    package static func register(at endpoint: String, issuer: String, port: Int, scopes: [String]? = nil, http: HTTPClient) throws(SignInError) -> ClientRegistration {
        let redirect = "http://127.0.0.1:\(port)\(redirectPath)"
        var fields: [String: JSONValueOut] = [
            "redirect_uris": .array([.string(redirect)]), "token_endpoint_auth_method": .string("none"),
            "grant_types": .array([.string("authorization_code"), .string("refresh_token")]), "response_types": .array([.string("code")]),
            "application_type": .string("native"), "client_name": .string("signin"),
        ]
        if let scopes, !scopes.isEmpty { fields["scope"] = .string(scopes.joined(separator: " ")) }
        let (id, doc) = try post(fields, to: endpoint, named: "the registration endpoint (\(endpoint))", http: http)
        var registration = ClientRegistration(issuer: issuer, clientID: id, clientSecret: doc["client_secret"]?.string.flatMap { $0.isEmpty ? nil : $0 },
                                              redirectPort: port, redirectPath: redirectPath)
        registration.scopes = doc["scope"]?.string.map { $0.split(separator: " ").map(String.init) } ?? scopes
        return registration
    }

    /// Asks the registration endpoint at `endpoint` (called `name` in errors) to register a client with `fields`
    /// (RFC 7591): its client ID, checked, and the whole answer. A refusal is the server's error, whatever the status.
    package static func post(_ fields: [String: JSONValueOut], to endpoint: String, named name: String,
                             http: HTTPClient) throws(SignInError) -> (clientID: String, answer: [String: JSONValue]) {
        let r = try http.postJSON(endpoint, endpoint: name, json: JSONValueOut.object(fields).text)
        guard r.status == 201 || r.status == 200, let doc = JSONValue.object(from: r.body) else {
            let o = JSONValue.object(from: r.body)
            throw .providerError(endpoint: name, code: o?["error"]?.string ?? "http_\(r.status)",
                                 detail: o?["error_description"]?.string ?? "the server did not register signin as a client")
        }
        guard let id = doc["client_id"]?.string, !id.isEmpty, TokenResponse.isTokenText(id) else {
            throw .providerError(endpoint: name, code: "invalid_response", detail: "no client_id in the answer")
        }
        return (id, doc)
    }

    /// As kept in the store.
    package var json: String {
        var o: [String: JSONValueOut] = ["issuer": .string(issuer), "client_id": .string(clientID), "redirect_port": .int(redirectPort),
                                         "redirect_path": .string(redirectPath)]
        if let clientSecret { o["client_secret"] = .string(clientSecret) }
        if let scopes { o["scope"] = .string(scopes.joined(separator: " ")) }
        if openID { o["openid"] = .bool(true) }
        if let resource { o["resource"] = .string(resource) }
        o["kind"] = .string(kind.rawValue)
        return JSONValueOut.object(o).text
    }

    package init(issuer: String, clientID: String, clientSecret: String?, redirectPort: Int, redirectPath: String) {
        self.issuer = issuer
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.redirectPort = redirectPort
        self.redirectPath = redirectPath
    }

    package init?(json: [String: JSONValue]) {
        guard let issuer = json["issuer"]?.string, let id = json["client_id"]?.string, let port = json["redirect_port"]?.number,
              let path = json["redirect_path"]?.string, (0...65535).contains(Int(port)) else { return nil }
        self.init(issuer: issuer, clientID: id, clientSecret: json["client_secret"]?.string, redirectPort: Int(port), redirectPath: path)
        scopes = json["scope"]?.string.map { $0.split(separator: " ").map(String.init) }
        // Kept before `openid` was: those servers were OpenID providers (signin signed in nowhere else then).
        openID = json["openid"]?.bool ?? (json["kind"] == nil)
        // A kind this signin does not know: the record is not used (a new registration is made instead).
        guard let kind = ClientIdentity.Kind(rawValue: json["kind"]?.string ?? ClientIdentity.Kind.registered.rawValue) else { return nil }
        self.kind = kind
        resource = json["resource"]?.string
    }
}
