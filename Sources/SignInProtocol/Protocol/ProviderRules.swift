import SignInBase
import SignInTransport

/// What is special about a provider, chosen by its issuer. The core knows no provider by name: a family's target
/// brings its provider's rules (Google's in SignInGoogle, `GoogleProvider`) through its configuration section
/// (`ConfigurationSection.provider(issuer:)`), and a configuration takes them from the sections it was read with.
/// Every other provider follows the standards as they are (`standard`).
public struct ProviderRules: Sendable {
    /// The issuer these rules are for, in its canonical form.
    public let issuer: String
    /// Other spellings of the issuer the provider uses in ID tokens and callbacks (Google: without the scheme).
    package let issuerAliases: Set<String>
    /// Authorization request parameters the provider needs beyond the standard ones (Google: a refresh token only
    /// with `access_type=offline`; incremental consent with `include_granted_scopes`).
    package let authorizationParameters: [(String, String)]
    /// The device authorization endpoint where discovery does not list it.
    package let deviceAuthorizationEndpoint: String?
    /// What to change when a sign-in brought no refresh token.
    public let refreshTokenHint: String
    /// The hosts `git-credential` answers when the configuration names none.
    public let defaultGitHosts: [String]
    /// The registries `docker-credential` answers when the configuration names none.
    public let defaultDockerRegistries: [String]
    /// How the provider's client IDs end (Google: `.apps.googleusercontent.com`), to check what a person pastes.
    public let clientIDSuffix: String?
    /// The beginnings of the provider's own endpoints: an app configured with such endpoints and no issuer is this
    /// provider (where any other server's endpoints make that server the issuer).
    package let endpointPrefixes: [String]
    /// A client ID that is an example's placeholder, never a real client, and what to do instead.
    package let placeholderClient: PlaceholderClient?

    /// An example's client ID, refused with `advice` (a struct, not a tuple: a tuple's type is made at run time).
    package struct PlaceholderClient: Sendable {
        package let clientID: String
        package let advice: String
        package init(clientID: String, advice: String) {
            self.clientID = clientID
            self.advice = advice
        }
    }

    /// Scopes the provider grants under another name than a tool may ask for them (Google: `email` and `profile` for
    /// their `userinfo` URLs), long name to the granted one.
    package let scopeAliases: [String: String]

    /// A provider's rules, for its family's target to declare.
    package init(issuer: String, issuerAliases: Set<String> = [], authorizationParameters: [(String, String)] = [], deviceAuthorizationEndpoint: String? = nil,
                 refreshTokenHint: String = "many providers want the \"offline_access\" scope for that", defaultGitHosts: [String] = [],
                 defaultDockerRegistries: [String] = [], clientIDSuffix: String? = nil, endpointPrefixes: [String] = [],
                 placeholderClient: PlaceholderClient? = nil, scopeAliases: [String: String] = [:]) {
        self.issuer = issuer
        self.issuerAliases = issuerAliases
        self.authorizationParameters = authorizationParameters
        self.deviceAuthorizationEndpoint = deviceAuthorizationEndpoint
        self.refreshTokenHint = refreshTokenHint
        self.defaultGitHosts = defaultGitHosts
        self.defaultDockerRegistries = defaultDockerRegistries
        self.clientIDSuffix = clientIDSuffix
        self.endpointPrefixes = endpointPrefixes
        self.placeholderClient = placeholderClient
        self.scopeAliases = scopeAliases
    }

    /// `scope` as the provider grants it.
    package func canonicalScope(_ scope: String) -> String { scopeAliases[scope] ?? scope }

    /// The scopes of `asked` that `granted` lacks (each compared in this provider's canonical spelling), or nil when
    /// all were granted: the token path's scope rule, which the metadata server also reports as an event.
    package func scopesNotGranted(_ asked: [String], granted: [String]) -> [String]? {
        let have = Set(granted.map(canonicalScope))
        let missing = asked.filter { !have.contains(canonicalScope($0)) }
        return missing.isEmpty ? nil : missing
    }

    /// Any provider no family names: the standards as they are.
    package static func standard(_ issuer: String) -> ProviderRules { ProviderRules(issuer: issuer) }

    /// Whether an issuer the provider named (`iss` in a token, a callback or a discovery document) is this one.
    package func names(_ named: String) -> Bool { named == issuer || issuerAliases.contains(named) }

    /// Whether `url` is one of this provider's own endpoints.
    package func owns(endpoint url: String) -> Bool { endpointPrefixes.contains { url.hasPrefix($0) } }
}
