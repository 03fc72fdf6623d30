import SignInKit

/// `--resource URI` and `--audience AUDIENCE`: an access token for one API. `--resource` asks for a token for
/// that API alone (RFC 8707; one of the configuration's `resources`, asked for at sign-in), `--audience` exchanges the
/// person's access token for one meant for that audience (RFC 8693 token exchange). Each is kept in the encrypted
/// entry until it expires, so the next call is answered with no network.
struct TokenTarget: OptionGroup, Equatable {
    static let resourceOption = OptionSpec("--resource", value: "URI", "An access token for this API alone (RFC 8707; one of the configuration's resources)")
    static let audienceOption = OptionSpec("--audience", value: "AUDIENCE", "An access token exchanged for one meant for this audience (RFC 8693 token exchange)")
    /// `--resource URL` on the account commands (`whoami`, `status`, `logout`): the sign-in for that API, found from its
    /// address as `login --resource` made it (or the configuration's, when the API is one of its resources).
    static let apiAccountOption = OptionSpec("--resource", value: "URL", "The sign-in for this API (as `signin login --resource URL` made it)")

    /// The API an account command names (`apiAccountOption`), checked.
    static func apiAccount(_ a: Arguments) throws(UsageError) -> String? {
        guard let r = a.value(apiAccountOption) else { return nil }
        guard SignInConfiguration.isValidResource(r) else {
            throw UsageError("--resource \"\(r.withoutControlCharacters)\" is not an API's URL (an absolute https URI without a fragment; http only on loopback)")
        }
        return r
    }

    var resource: String?
    var audience: String?

    init(resource: String? = nil, audience: String? = nil) {
        self.resource = resource
        self.audience = audience
    }

    init(_ a: Arguments) throws(UsageError) {
        resource = a.value(Self.resourceOption)
        audience = a.value(Self.audienceOption)
        if let r = resource, !SignInConfiguration.isValidResource(r) { throw Self.notAResource(r) }
        if audience?.isEmpty == true { throw UsageError("--audience needs a value (whom the token is for)") }
    }

    /// `--resource URL` alone (`login`, which takes no `--audience`), checked.
    /// `--resource URL` on `login`: a sign-in for that API.
    static let loginResourceOption = OptionSpec("--resource", value: "URL", "Sign in for this API: one of the configuration's resources, else any API or MCP server from its address (a sign-in of its own)")

    static func resource(_ a: Arguments) throws(UsageError) -> String? {
        let resource = a.value(loginResourceOption)
        if let r = resource, !SignInConfiguration.isValidResource(r) { throw notAResource(r) }
        return resource
    }

    private static func notAResource(_ r: String) -> UsageError {
        UsageError("--resource \"\(r.withoutControlCharacters)\" is not a resource indicator (an absolute https URI without a fragment; http only on loopback)")
    }

    /// Whether either was given: the token is then not the grant's own.
    var isSet: Bool { resource != nil || audience != nil }
}
