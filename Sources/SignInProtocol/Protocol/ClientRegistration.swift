import SignInBase
import SignInTransport
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

    package static let redirectPath = "/callback"

    /// Registers at `endpoint` with a redirect URI on `port`.
    package static func register(at endpoint: String, issuer: String, port: Int, http: HTTPClient) throws(SignInError) -> ClientRegistration {
        let redirect = "http://127.0.0.1:\(port)\(redirectPath)"
        let body: JSONValueOut = .object([
            "redirect_uris": .array([.string(redirect)]), "token_endpoint_auth_method": .string("none"),
            "grant_types": .array([.string("authorization_code"), .string("refresh_token")]), "response_types": .array([.string("code")]),
            "application_type": .string("native"), "client_name": .string("signin"),
        ])
        let name = "the registration endpoint (\(endpoint))"
        let r = try http.postJSON(endpoint, endpoint: name, json: body.text)
        guard r.status == 201 || r.status == 200, let doc = JSONValue.object(from: r.body) else {
            let o = JSONValue.object(from: r.body)
            throw .providerError(endpoint: name, code: o?["error"]?.string ?? "http_\(r.status)",
                                 detail: o?["error_description"]?.string ?? "the server did not register signin as a client")
        }
        guard let id = doc["client_id"]?.string, !id.isEmpty, TokenResponse.isTokenText(id) else {
            throw .providerError(endpoint: name, code: "invalid_response", detail: "no client_id in the answer")
        }
        return ClientRegistration(issuer: issuer, clientID: id, clientSecret: doc["client_secret"]?.string.flatMap { $0.isEmpty ? nil : $0 },
                                  redirectPort: port, redirectPath: redirectPath)
    }

    /// As kept in the store.
    package var json: String {
        var o: [String: JSONValueOut] = ["issuer": .string(issuer), "client_id": .string(clientID), "redirect_port": .int(redirectPort),
                                         "redirect_path": .string(redirectPath)]
        if let clientSecret { o["client_secret"] = .string(clientSecret) }
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
              let path = json["redirect_path"]?.string, (1...65535).contains(Int(port)) else { return nil }
        self.init(issuer: issuer, clientID: id, clientSecret: json["client_secret"]?.string, redirectPort: Int(port), redirectPath: path)
    }
}
