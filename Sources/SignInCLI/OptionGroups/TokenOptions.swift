import SignInKit

// Which token a command asks for, as its options say: how fresh (`Freshness`: --min-ttl, --force-refresh), whose
// (`Impersonation`: --impersonate-service-account) and for which API (`TokenTarget`: --resource, --audience). The
// token commands and the bridges read them; the one token path (`TokenRequest`) is what they become.

/// `--min-ttl` and `--force-refresh`, as the token commands and bridges read them: the two groups below, together.
struct Freshness: OptionGroup {
    static let options = MinimumValidity.options + RefreshChoice.options
    let minTTL: Int
    let forceRefresh: Bool

    init(_ a: Arguments) throws(UsageError) {
        minTTL = try MinimumValidity(a).seconds
        forceRefresh = try RefreshChoice(a).forceRefresh
    }

    /// Whether the static half of the release build can start this run: a forced refresh needs the network (the
    /// dynamic half, which loads libcurl), so it is handed over at once, unless a forwarded agent answers it.
    func startsStatic(_ a: Arguments, _ env: [String: String]) -> Bool { Self.startsStatic(forceRefresh: forceRefresh, a, env) }

    /// The same rule for a command with `--force-refresh` alone (`aws-credential-process`), so its hand-over is the
    /// token commands'.
    static func startsStatic(forceRefresh: Bool, _ a: Arguments, _ env: [String: String]) -> Bool {
        !forceRefresh || ForwardedAgent.socket(a, env) != nil
    }

    /// Why a run `startsStatic` turns away is handed over.
    static let handOverReason = "a forced refresh loads libcurl"

    init(minTTL: Int, forceRefresh: Bool = false) {
        self.minTTL = minTTL
        self.forceRefresh = forceRefresh
    }
}

/// `--min-ttl SECONDS` alone, for the bridges (whose consumers ask again when a token ends).
struct MinimumValidity: OptionGroup {
    static let options: [OptionSpec] = [.minTTL]
    let seconds: Int
    init(_ a: Arguments) throws(UsageError) { seconds = try a.int(.minTTL, default: 60, in: 0...86400) }
}

/// `--force-refresh` alone (`aws-credential-process`), with the token commands' hand-over rule.
struct RefreshChoice: OptionGroup {
    static let options: [OptionSpec] = [.forceRefresh]
    let forceRefresh: Bool
    init(_ a: Arguments) throws(UsageError) { forceRefresh = a.has(.forceRefresh) }
}

/// `--impersonate-service-account SA[,SA...]`, as gcloud's: the commands that hand out tokens hand out the service
/// account's instead, minted with the person's grant (the last e-mail is the target, any before it delegates).
struct Impersonation: OptionGroup {
    static let option = OptionSpec("--impersonate-service-account", value: "SA", check: .serviceAccountChain, "Hand out this service account's tokens, minted with your grant (a comma list: a delegation chain; also impersonate_service_account)")

    /// The chain given on the command line (nil: as the configuration says, which the one token path decides,
    /// `TokenRequest.Principal.configured`). Checked as the command line is read (`ValueCheck.serviceAccountChain`).
    let chain: [String]?

    static let options = [option]

    init(_ a: Arguments) { chain = a.value(Self.option).map(ValueCheck.serviceAccounts) }
}

extension TokenRequest.Principal {
    /// `--impersonate-service-account`'s chain as a principal: none given, as the configuration says; an empty one,
    /// the person; else that chain.
    init(given chain: [String]?) {
        guard let chain else { self = .configured; return }
        self = chain.isEmpty ? .person : .serviceAccount(chain: chain)
    }
}

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
