import SignInBase
import SignInTransport
import FoundationEssentials

/// What a person needs to finish a device sign-in (RFC 8628) on another device.
public struct DeviceCode: Sendable, Equatable {
    /// Where to go.
    public let verificationURI: URL
    /// What to type there.
    public let userCode: String
    /// A URI with the code already in it, when the provider gives one.
    public let verificationURIComplete: URL?
    /// How long the code stays valid from when it was shown.
    public let expiresIn: Duration
}

/// RFC 8628: request a device code, then poll the token endpoint until the person approves, denies or it expires.
package struct DeviceAuthorization {
    package let tokens: TokenClient
    package let scopes: [String]

    package func run(canceller: Canceller, timeout: Int, show: (DeviceCode) -> Void) throws(SignInError) -> TokenResponse {
        guard let url = tokens.endpoints.deviceAuthorization else {
            throw .unsupported(reason: "The provider \(tokens.config.issuer) advertises no device_authorization_endpoint; use --no-browser (paste the address back) or an SSH tunnel instead.")
        }
        let name = "device authorization endpoint (\(url))"
        var form = [("scope", scopes.joined(separator: " "))]
        var headers: [String] = []
        tokens.client.apply(.formBody, form: &form, headers: &headers)
        let r = try tokens.http.postForm(url, endpoint: name, form: form, headers: headers)
        guard r.status == 200 else {
            let e = OAuthError.from(r, endpoint: name)
            if case .providerError(_, "invalid_scope", _) = e {
                throw .providerError(endpoint: name, code: "invalid_scope",
                                     detail: "the requested scopes (\(scopes.joined(separator: " "))) are not allowed on the device flow; ask for fewer scopes or sign in with the browser")
            }
            throw e
        }
        guard let o = JSONValue.object(from: r.body), let deviceCode = o["device_code"]?.string, let userCode = o["user_code"]?.string,
              let verification = o["verification_uri"]?.string ?? o["verification_url"]?.string  // Google says _url
        else { throw .providerError(endpoint: name, code: "invalid_response", detail: "missing device_code, user_code or verification_uri") }
        // Shown to the person: a URL that passes the endpoint rules and a code without control characters.
        let complete = o["verification_uri_complete"]?.string
        for uri in [verification, complete].compactMap({ $0 }) {
            if let problem = EndpointURL.problem(uri) { throw .providerError(endpoint: name, code: "invalid_response", detail: "verification URI: \(problem)") }
        }
        let expiresIn = min(o["expires_in"]?.int ?? 600, timeout)
        var interval = max(1, o["interval"]?.int ?? 5)
        // Both passed EndpointURL.problem above, which parses them as URLs.
        show(DeviceCode(verificationURI: URL(string: verification)!, userCode: userCode.withoutControlCharacters,
                        verificationURIComplete: complete.flatMap { URL(string: $0) }, expiresIn: .seconds(expiresIn)))
        let deadline = MonotonicClock.now() + Double(expiresIn)
        let poll = [("grant_type", "urn:ietf:params:oauth:grant-type:device_code"), ("device_code", deviceCode)]
        var networkFailures = 0
        while true {
            if canceller.sleep(seconds: Double(interval)) { throw .canceled(reason: "the sign-in was canceled while waiting for the other device") }
            if MonotonicClock.now() >= deadline { throw .timedOut(after: .seconds(expiresIn)) }
            do {
                // Google wants client_id and client_secret in the body here.
                return try tokens.tokenRequest(poll, style: .formBody)
            } catch {
                if case .networkUnavailable = error { networkFailures += 1 } else { networkFailures = 0 }
                switch error {
                case .providerError(_, "authorization_pending", _): continue
                case .providerError(_, "slow_down", _): interval += 5
                case .providerError(_, "expired_token", _): throw .timedOut(after: .seconds(expiresIn))
                case .providerError(_, "access_denied", _): throw .canceled(reason: "the sign-in was denied on the other device")
                case .networkUnavailable where networkFailures < 3: continue  // a blip while polling is not the end
                default: throw error
                }
            }
        }
    }

    package init(tokens: TokenClient, scopes: [String]) {
        self.tokens = tokens
        self.scopes = scopes
    }
}
