import SignInKit

/// `--resource URI` and `--audience AUDIENCE`: an access token for one API. `--resource` asks for a token for
/// that API alone (RFC 8707; one of the configuration's `resources`, asked for at sign-in), `--audience` exchanges the
/// person's access token for one meant for that audience (RFC 8693 token exchange). Each is kept in the encrypted
/// entry until it expires, so the next call is answered with no network. With an ID token (`id-token --audience`,
/// which reads its own option), `audience` is the ID token's audience.
struct TokenTarget: OptionGroup, Equatable {
    static let resourceOption = OptionSpec("--resource", value: "URI", check: .resourceIndicator, "An access token for this API alone (RFC 8707; one of the configuration's resources)")
    static let audienceOption = OptionSpec("--audience", value: "AUDIENCE", check: .nonEmpty(what: "whom the token is for"), "An access token exchanged for one meant for this audience (RFC 8693 token exchange)")
    /// `--resource URL` on the account commands (`whoami`, `status`, `logout`): the sign-in for that API, found from its
    /// address as `login --resource` made it (or the configuration's, when the API is one of its resources).
    static let apiAccountOption = OptionSpec("--resource", value: "URL", check: .apiURL, "The sign-in for this API (as `signin login --resource URL` made it)")

    /// The API an account command names (`apiAccountOption`; its value is checked as the command line is read).
    static func apiAccount(_ a: Arguments) -> String? { a.value(apiAccountOption) }

    static let options = [resourceOption, audienceOption]

    var resource: String?
    var audience: String?

    init(resource: String? = nil, audience: String? = nil) {
        self.resource = resource
        self.audience = audience
    }

    /// The two options' values (each checked as the command line is read: `ValueCheck`).
    init(_ a: Arguments) {
        resource = a.value(Self.resourceOption)
        audience = a.value(Self.audienceOption)
    }

    /// `--resource URL` on `login`: a sign-in for that API.
    static let loginResourceOption = OptionSpec("--resource", value: "URL", check: .resourceIndicator, "Sign in for this API: one of the configuration's resources, else any API or MCP server from its address (a sign-in of its own)")

    /// `--resource URL` alone (`login`, which takes no `--audience`).
    static func resource(_ a: Arguments) -> String? { a.value(loginResourceOption) }

    /// The API a run may sign in for with no configuration at all (`--resource` alone: the API's metadata says where);
    /// nil with `--audience`, an exchange of the configured grant's token.
    var signInResource: String? { audience == nil ? resource : nil }

    /// Whether either was given: the token is then not the grant's own.
    var isSet: Bool { resource != nil || audience != nil }
}
