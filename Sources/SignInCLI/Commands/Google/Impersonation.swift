@_spi(CLI) import SignInKit

/// `--impersonate-service-account SA[,SA...]`, as gcloud's: the commands that hand out tokens hand out the service
/// account's instead, minted with the person's grant (the last e-mail is the target, any before it delegates).
enum Impersonation {
    static let option = OptionSpec("--impersonate-service-account", value: "SA", "Hand out this service account's tokens, minted with your grant (a comma list: a delegation chain; also impersonate_service_account)")

    /// The chain given on the command line (nil: as the configuration says). Checked here, before anything runs.
    static func chain(_ a: Arguments) throws(UsageError) -> [String]? {
        guard let v = a.value(option) else { return nil }
        let items = v.split(separator: ",").map { $0.trimmingWhitespace }
        guard !items.isEmpty else { throw UsageError("--impersonate-service-account needs a service account's e-mail") }
        if let bad = items.first(where: { !ServiceAccounts.isEmail($0) }) {
            throw UsageError("--impersonate-service-account: \"\(bad.withoutControlCharacters)\" is not a service account's e-mail (NAME@PROJECT.iam.gserviceaccount.com)")
        }
        return items
    }

    /// The chain in force: the command line's, else the configuration's (empty: the person's own tokens).
    static func chain(_ given: [String]?, _ c: Context) -> [String] { given ?? c.client.configuration.impersonateServiceAccount }

    /// A fresh token of the kind asked, the person's or, with a chain, the service account's.
    /// `audience`: for an ID token, who it is for (nil: this client, the only audience a person's ID token has).
    static func token(_ c: Context, _ freshness: Freshness, kind: TokenKind, chain: [String], audience: String? = nil,
                      interactive: Bool = false) throws(SignInError) -> (SignInToken, SignInUser?) {
        guard !chain.isEmpty else {
            if let audience, audience != c.client.configuration.clientID {
                throw .unsupported(reason: "an ID token for audience \(audience) needs a service account: add --impersonate-service-account SA (the signed-in person's ID tokens are for client \(c.client.configuration.clientID) only)")
            }
            let user = try Bridge.freshUser(c, freshness, token: kind, interactive: interactive)
            guard let token = kind == .id ? user.idToken : user.accessToken else { throw .noPreviousSignIn(reason: .noToken(kind)) }
            return (token, user)
        }
        if interactive { _ = try Bridge.freshUser(c, Freshness(minTTL: 60), token: .access, interactive: true) }
        let validity = Duration.seconds(freshness.minTTL)
        switch kind {
        case .access:
            return (try c.client.serviceAccountAccessToken(chain: chain, account: c.account, minimumValidity: validity), nil)
        case .id:
            guard let audience else {
                throw .unsupported(reason: "a service account's ID token needs an audience: add --audience AUDIENCE (the service it is for)")
            }
            return (try c.client.serviceAccountIDToken(chain: chain, audience: audience, account: c.account, minimumValidity: validity), nil)
        }
    }
}
