import SignInBase
import SignInTransport

/// What is special about a provider, chosen by its issuer: the one place that says it, so that adding a provider's
/// rules is one more case here. Every other provider follows the standards as they are.
package struct ProviderRules: Sendable {
    /// The issuer these rules are for, in its canonical form.
    public let issuer: String
    /// Other spellings of the issuer the provider uses in ID tokens and callbacks (Google: without the scheme).
    let issuerAliases: Set<String>
    /// Authorization request parameters the provider needs beyond the standard ones (Google: a refresh token only
    /// with `access_type=offline`; incremental consent with `include_granted_scopes`).
    let authorizationParameters: [(String, String)]
    /// The device authorization endpoint where discovery does not list it.
    let deviceAuthorizationEndpoint: String?
    /// What to change when a sign-in brought no refresh token.
    public let refreshTokenHint: String
    /// The hosts `git-credential` answers when the configuration names none.
    public let defaultGitHosts: [String]
    /// How the provider's client IDs end (Google: `.apps.googleusercontent.com`), to check what a person pastes.
    public let clientIDSuffix: String?
    /// Picture addresses that take a size suffix (`=s<N>-c`), and so can be asked for at a dimension.
    let sizablePicturePrefixes: [String]

    /// Scopes the provider grants under another name than a tool may ask for them (Google: `email` and `profile` for
    /// their `userinfo` URLs), long name to the granted one.
    let scopeAliases: [String: String]

    /// `scope` as the provider grants it.
    package func canonicalScope(_ scope: String) -> String { scopeAliases[scope] ?? scope }

    /// The scopes of `asked` that `granted` lacks (each compared in this provider's canonical spelling), or nil when
    /// all were granted: the token path's scope rule, which the metadata server also reports as an event.
    package func scopesNotGranted(_ asked: [String], granted: [String]) -> [String]? {
        let have = Set(granted.map(canonicalScope))
        let missing = asked.filter { !have.contains(canonicalScope($0)) }
        return missing.isEmpty ? nil : missing
    }

    /// Google's issuer, the default.
    public static let googleIssuer = "https://accounts.google.com"

    /// The rules for `issuer`.
    public static func forIssuer(_ issuer: String) -> ProviderRules {
        isGoogle(issuer) ? google : standard(issuer)
    }

    /// Google (accounts.google.com).
    package static let google = ProviderRules(
        issuer: googleIssuer,
        issuerAliases: ["accounts.google.com", "https://accounts.google.com/"],
        authorizationParameters: [("access_type", "offline"), ("include_granted_scopes", "true")],
        deviceAuthorizationEndpoint: "https://oauth2.googleapis.com/device/code",
        refreshTokenHint: "add \"prompt\": \"consent\" to extra_authorization_parameters",
        defaultGitHosts: ["source.developers.google.com", "*.googlesource.com"],
        clientIDSuffix: ".apps.googleusercontent.com",
        sizablePicturePrefixes: (3...6).map { "https://lh\($0).googleusercontent.com/" },
        scopeAliases: ["https://www.googleapis.com/auth/userinfo.email": "email", "https://www.googleapis.com/auth/userinfo.profile": "profile"])

    /// Any other OpenID provider.
    static func standard(_ issuer: String) -> ProviderRules {
        ProviderRules(issuer: issuer, issuerAliases: [], authorizationParameters: [], deviceAuthorizationEndpoint: nil,
                      refreshTokenHint: "many providers want the \"offline_access\" scope for that", defaultGitHosts: [],
                      clientIDSuffix: nil, sizablePicturePrefixes: [], scopeAliases: [:])
    }

    /// Whether `issuer` is Google's, in any of the forms Google uses.
    /// (Literal comparisons: the configuration asks this on every command, before any rules are needed.)
    /// Whether an endpoint is one of Google's own (its sign-in or token hosts).
    static func isGoogleEndpoint(_ url: String) -> Bool {
        ["https://accounts.google.com/", "https://oauth2.googleapis.com/", "https://www.googleapis.com/"].contains { url.hasPrefix($0) }
    }

    static func isGoogle(_ issuer: String) -> Bool {
        issuer == googleIssuer || issuer == "accounts.google.com" || issuer == "https://accounts.google.com/"
    }

    /// Whether an issuer the provider named (`iss` in a token, a callback or a discovery document) is this one.
    package func names(_ named: String) -> Bool { named == issuer || issuerAliases.contains(named) }
}
