import SignInBase
import SignInTransport
import FoundationEssentials

/// OAuth 2.0 Token Exchange (RFC 8693): a token of one kind (here an ID token) traded at a security token service
/// for an access token for `audience`. The answer is a token response (RFC 6749 5.1, checked as one).
package struct TokenExchange {
    package static let grantType = "urn:ietf:params:oauth:grant-type:token-exchange"
    static let idTokenType = "urn:ietf:params:oauth:token-type:id_token"
    package static let accessTokenType = "urn:ietf:params:oauth:token-type:access_token"

    package let endpoint: String
    package let endpointName: String
    package let http: HTTPClient

    /// Trades `subjectToken` (an ID token) for an access token for `audience` with `scopes`; `extra` adds the
    /// service's own fields (Google's `options`).
    package func exchange(idToken subjectToken: String, audience: String, scopes: [String], extra: [(String, String)] = []) throws(SignInError) -> SignInToken {
        var form = [("grant_type", Self.grantType), ("audience", audience), ("requested_token_type", Self.accessTokenType),
                    ("subject_token", subjectToken), ("subject_token_type", Self.idTokenType)]
        if !scopes.isEmpty { form.append(("scope", scopes.joined(separator: " "))) }
        form += extra
        let r = try http.postForm(endpoint, endpoint: endpointName, form: form)
        let t = try TokenResponse.parse(r, endpoint: endpointName).checkedAsAccessToken(endpoint: endpointName)
        return SignInToken(value: t.accessToken, expirationDate: t.expiresIn.map { Date().addingTimeInterval(TimeInterval($0)) })
    }

    package init(endpoint: String, endpointName: String, http: HTTPClient) {
        self.endpoint = endpoint
        self.endpointName = endpointName
        self.http = http
    }
}
