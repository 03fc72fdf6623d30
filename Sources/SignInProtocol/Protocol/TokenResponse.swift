import SignInBase
import SignInTransport
import FoundationEssentials

/// A token endpoint's answer (RFC 6749 5.1), checked before anything in it is used.
package struct TokenResponse: Sendable, CustomStringConvertible {
    package var accessToken: String
    package var expiresIn: Int?
    package var refreshToken: String?
    package var idToken: String?
    package var scope: [String]?
    /// `DPoP` when the access token is bound to the proof key (RFC 9449 5), else `Bearer`.
    package var tokenType: String = "Bearer"
    /// A token exchange's `issued_token_type` (RFC 8693 2.2.1), when the answer says one.
    package var issuedTokenType: String?

    /// An answer as a stand-in token endpoint gives it (the real ones are parsed: `parse(_:endpoint:proofSent:)`).
    package init(accessToken: String, expiresIn: Int? = nil, refreshToken: String? = nil, idToken: String? = nil, scope: [String]? = nil,
                 tokenType: String = "Bearer", issuedTokenType: String? = nil) {
        self.accessToken = accessToken
        self.expiresIn = expiresIn
        self.refreshToken = refreshToken
        self.idToken = idToken
        self.scope = scope
        self.tokenType = tokenType
        self.issuedTokenType = issuedTokenType
    }

    /// What a token may be made of, wherever it comes from (the token endpoint, the IAM API): visible ASCII only,
    /// so no token can carry a line break into a header or an escape into a terminal.
    package static func isTokenText(_ token: String) -> Bool { token.utf8.allSatisfy { (0x21...0x7E).contains($0) } }

    /// The issued token types an exchange for an access token may answer (RFC 8693 3): an access token, or a JWT
    /// (which is one here). Anything else (a refresh token, an ID token, a SAML assertion) is refused, never handed
    /// out as an access token.
    package static let accessTokenTypes: Set<String> = ["urn:ietf:params:oauth:token-type:access_token", "urn:ietf:params:oauth:token-type:jwt"]

    /// Refuses an exchange's answer whose `issued_token_type` is not an access token.
    package func checkedAsAccessToken(endpoint: String) throws(SignInError) -> TokenResponse {
        if let t = issuedTokenType, !Self.accessTokenTypes.contains(t) {
            throw .providerError(endpoint: endpoint, code: "invalid_response",
                                 detail: "the exchange issued a \(t.withoutControlCharacters.prefix(100)), not an access token")
        }
        return self
    }

    /// The longest lifetime an answer's `expires_in` is taken for (a year).
    package static let longestLifetime = 365 * 86_400

    /// The refresh token a 200 answer carries, when it could be one (a JSON object's non-empty `refresh_token` of
    /// visible ASCII), whatever else is wrong with the answer: a rotated refresh token is the grant, saved before the
    /// answer is refused (the old one is spent).
    package static func refreshToken(in r: HTTPResponse) -> String? {
        guard r.status == 200, let o = answerObject(r), let t = o["refresh_token"]?.string,
              !t.isEmpty, t.utf8.count <= 16_384, isTokenText(t) else { return nil }
        return t
    }

    /// A token answer's members: a JSON object, or, from a server that answers `application/x-www-form-urlencoded`
    /// (GitHub-style OAuth apps unless asked for JSON), its form read as strings, `expires_in` as a number.
    package static func answerObject(_ r: HTTPResponse) -> [String: JSONValue]? {
        if let o = JSONValue.object(from: r.body) { return o }
        guard r.headers["content-type"]?.lowercased().hasPrefix("application/x-www-form-urlencoded") == true, r.body.count <= 1 << 20,
              let text = String(data: r.body, encoding: .utf8), let form = FormEncoding.decode(Substring(text.trimmingWhitespace)) else { return nil }
        var o: [String: JSONValue] = [:]
        for (k, v) in form { o[k] = k == "expires_in" ? Int(v).map { .number(Double($0)) } ?? .string(v) : .string(v) }
        return o
    }

    /// Never the tokens themselves: a stray `print` or a test failure message must not leak one.
    package var description: String {
        "TokenResponse(access token: \(accessToken.count) characters, expires in: \(expiresIn.map(String.init) ?? "?") s, refresh token: \(refreshToken == nil ? "no" : "yes"), ID token: \(idToken == nil ? "no" : "yes"))"
    }

    /// `proofSent`: the request carried a DPoP proof, so the answer may be a `DPoP` token (and only then).
    package static func parse(_ r: HTTPResponse, endpoint: String, proofSent: Bool = false) throws(SignInError) -> TokenResponse {
        guard r.status == 200 else { throw OAuthError.from(r, endpoint: endpoint) }
        func invalid(_ detail: String) -> SignInError { .providerError(endpoint: endpoint, code: "invalid_response", detail: detail) }
        guard let o = answerObject(r) else { throw invalid("the answer is not a JSON object (nor a form-encoded one)") }
        // An answer that names an error is an error, even beside an access token (the HTTP-200 error style of
        // GitHub-style servers): nothing of it is kept.
        if let code = o["error"]?.string, !code.isEmpty {
            throw OAuthError.make(code: code, description: o["error_description"]?.string, endpoint: endpoint)
        }
        guard let access = o["access_token"]?.string, !access.isEmpty else {
            if let code = o["error"]?.string { throw OAuthError.make(code: code, description: o["error_description"]?.string, endpoint: endpoint) }
            throw invalid("no access_token")
        }
        guard let type = o["token_type"]?.string, type.lowercased() == "bearer" || (proofSent && type.lowercased() == "dpop") else {
            throw invalid(proofSent ? "token_type is neither Bearer nor DPoP" : "token_type is not Bearer")
        }
        // An absurd lifetime is bounded, not fatal (the answer may carry a rotated refresh token, the grant itself):
        // negative reads as unsaid, more than a year as a year, so the token is looked at again in time.
        let expires = o["expires_in"]?.int.flatMap { $0 < 0 ? nil : min($0, Self.longestLifetime) }
        let refresh = o["refresh_token"]?.string.flatMap { $0.isEmpty ? nil : $0 }
        let id = o["id_token"]?.string
        // Tokens go into Authorization headers and onto standard output: only visible ASCII (RFC 6749 A.12-A.13),
        // so a provider cannot inject a header line or a terminal escape sequence through one.
        for (name, token) in [("access_token", access), ("refresh_token", refresh), ("id_token", id)] {
            if let token, !Self.isTokenText(token) { throw invalid("\(name) holds characters a token may not contain") }
        }
        let scope = o["scope"]?.string?.split(separator: " ").map { String($0).withoutControlCharacters }.filter { !$0.isEmpty }
        var answer = TokenResponse(accessToken: access, expiresIn: expires, refreshToken: refresh, idToken: id, scope: scope,
                                   tokenType: type.lowercased() == "dpop" ? "DPoP" : "Bearer")
        answer.issuedTokenType = o["issued_token_type"]?.string
        return answer
    }
}

/// OAuth 2.0 error responses (RFC 6749 5.2), turned into `SignInError.providerError` with the provider's code.
package enum OAuthError {
    /// The codes that mean the provider no longer accepts a grant: the person revoked access, the grant expired,
    /// or a rotated refresh token was reused. `invalid_code` is what some providers say instead.
    static let grantRefusedCodes: Set<String> = ["invalid_grant", "invalid_code"]

    package static func make(code: String, description: String?, endpoint: String) -> SignInError {
        .providerError(endpoint: endpoint, code: code, detail: description.map { String($0.prefix(300)) })
    }

    package static func from(_ r: HTTPResponse, endpoint: String) -> SignInError {
        if r.status == 429 { return .rateLimited(endpoint: endpoint, retryAfterSeconds: retryAfterSeconds(r.headers["retry-after"])) }
        if let o = JSONValue.object(from: r.body), let code = o["error"]?.string {
            return make(code: code, description: o["error_description"]?.string, endpoint: endpoint)
        }
        let detail = r.body.isEmpty ? "HTTP \(r.status) with an empty body" : "HTTP \(r.status), not an OAuth error response"
        return .providerError(endpoint: endpoint, code: "http_\(r.status)", detail: detail)
    }
}

extension OAuthError {
    /// `Retry-After` (RFC 9110 10.2.3) in seconds from now: a number of seconds, or an HTTP date. Nil when absent or
    /// unreadable; capped at a day, so a hostile value cannot read as "never".
    package static func retryAfterSeconds(_ value: String?, now: Date = Date()) -> Int? {
        guard let v = value?.trimmingWhitespace, !v.isEmpty else { return nil }
        if v.allSatisfy({ $0.isASCII && $0.isNumber }) { return v.count > 6 ? 86_400 : min(Int(v) ?? 0, 86_400) }
        // IMF-fixdate: "Sun, 06 Nov 1994 08:49:37 GMT".
        let parts = v.split(separator: " ")
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        guard parts.count == 6, parts[5] == "GMT", let day = Int(parts[1]), let month = months.firstIndex(of: String(parts[2])),
              let year = Int(parts[3]) else { return nil }
        let hms = parts[4].split(separator: ":").compactMap { Int($0) }
        guard hms.count == 3 else { return nil }
        // Days from the civil date (Howard Hinnant's algorithm), so no calendar is loaded for one header.
        let y = month < 2 ? year - 1 : year, m = month + 1
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        let days = era * 146_097 + doe - 719_468
        let at = Double(days * 86_400 + hms[0] * 3600 + hms[1] * 60 + hms[2])
        return max(0, min(86_400, Int((at - now.timeIntervalSince1970).rounded(.up))))
    }
}

extension SignInError {
    /// True when the provider refused the grant itself (not a network fault or an outage).
    package var isGrantRefused: Bool {
        if case .providerError(_, let code, _) = self { return OAuthError.grantRefusedCodes.contains(code) }
        return false
    }
}
