import SignInBase
import SignInTransport
import FoundationEssentials

/// How the client proves who it is at the token, revocation and device endpoints (RFC 6749 2.3.1): the one
/// place the client secret is put on the wire.
package struct ClientAuthentication: Sendable {
    package let clientID: String
    package let clientSecret: String?

    package init(clientID: String, clientSecret: String?) {
        self.clientID = clientID
        self.clientSecret = clientSecret
    }

    package enum Style {
        /// HTTP Basic when there is a secret (which every provider must accept), else the client ID in the body.
        case basicHeader
        /// Client ID and secret in the form body: Google's device flow wants this.
        case formBody
    }

    /// Adds the client's credentials to a request's form and headers.
    package func apply(_ style: Style, form: inout [(String, String)], headers: inout [String]) {
        guard let secret = clientSecret else {
            form.append(("client_id", clientID))
            return
        }
        switch style {
        case .basicHeader:
            let pair = FormEncoding.escape(clientID) + ":" + FormEncoding.escape(secret)
            headers.append("Authorization: Basic " + Data(pair.utf8).base64EncodedString())
        case .formBody:
            form.append(("client_id", clientID))
            form.append(("client_secret", secret))
        }
    }
}
