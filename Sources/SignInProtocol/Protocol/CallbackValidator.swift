import SignInBase
import SignInTransport

/// The checks every authorization response gets (RFC 6749 4.1.2, RFC 9207), whether it reaches the loopback
/// listener or is pasted from the browser's address bar.
package struct CallbackValidator {
    package let state: String
    package let issuer: String
    /// The provider's rules, for the other spellings of its issuer (nil: exactly `issuer`).
    package var issuerRules: ProviderRules?
    /// The provider said it always sends `iss` (`authorization_response_iss_parameter_supported`): a response
    /// without it is refused (RFC 9207 2.4).
    package var issuerRequired = false
    /// The request asked for no interaction (`prompt=none`): only then is `consent_required` the provider's
    /// answer to that. Otherwise it is the person declining (LemonLDAP::NG answers "Refuse" so).
    package var promptNone = false

    package enum Verdict: Equatable {
        case accept(code: String)
        /// Not for this sign-in: tell the person, keep waiting.
        case refuse(String)
        /// For this sign-in, and it ends it.
        case end(SignInError)
    }

    package func check(query: Substring) -> Verdict {
        guard let p = FormEncoding.decode(query) else { return .refuse("malformed query (bad percent-encoding or repeated parameter)") }
        guard let got = p["state"] else {
            // The provider may report a denial without echoing state (oidc-provider-mock does). Such a response can
            // only end this attempt, never sign anyone in.
            if p["error"] == "access_denied" { return .end(.canceled(reason: "the sign-in was denied in the browser")) }
            return .refuse("no state parameter")
        }
        guard Crypto.constantTimeEqual(got, state) else { return .refuse("state does not match this sign-in (possible cross-site request forgery)") }
        if let iss = p["iss"] {
            guard Issuer.same(iss, issuer, rules: issuerRules) else {
                return .end(.callbackRejected(reason: "the response names issuer \"\(iss)\", not \"\(issuer)\" (possible mix-up attack)"))
            }
        } else if issuerRequired {
            return .refuse("no iss parameter, which this provider always sends (RFC 9207); possible mix-up attack")
        }
        if let error = p["error"] {
            if error == "access_denied" { return .end(.canceled(reason: "the sign-in was denied in the browser")) }
            if error == "consent_required" && !promptNone { return .end(.canceled(reason: "the sign-in was refused in the browser (no consent)")) }
            return .end(.providerError(endpoint: "authorization endpoint", code: error, detail: p["error_description"]))
        }
        guard let code = p["code"], !code.isEmpty else { return .end(.providerError(endpoint: "authorization endpoint", code: "no_code", detail: "the response carried neither code nor error")) }
        return .accept(code: code)
    }

    /// Checks an address pasted from the browser's address bar.
    package func checkPasted(_ line: String) -> Verdict {
        guard let q = line.firstIndex(of: "?") else { return .refuse("that is not the address the browser ended at (no query part)") }
        var query = line[line.index(after: q)...]
        if let hash = query.firstIndex(of: "#") { query = query[..<hash] }
        return check(query: query)
    }

    package init(state: String, issuer: String, issuerRequired: Bool = false, promptNone: Bool = false) {
        self.state = state
        self.issuer = issuer
        self.issuerRequired = issuerRequired
        self.promptNone = promptNone
    }
}
