import SignInBase
import SignInProtocol
import FoundationEssentials

/// What a consumer asks of signin's one token path (`SignInClient.token(_:)`): `signin token` and `id-token`,
/// every bridge, the metadata server and the agent (whose protocol carries this value across the socket) all
/// build one and get the same answer for it.
public struct TokenRequest: Sendable, Equatable {
    /// The access token (for APIs) or the ID token.
    public var kind: TokenKind
    /// Empty: the signed-in person's own token. Otherwise a service account's, minted with the person's grant
    /// (the last e-mail is the service account, any before it delegates), as gcloud's
    /// `--impersonate-service-account`.
    public var serviceAccountChain: [String]
    /// For an ID token, whom it is for. nil means this client, the only audience a person's ID token has;
    /// another audience needs a service account. For the person's access token: the audience to exchange it for
    /// (RFC 8693 token exchange at the provider's token endpoint), kept per audience until it expires.
    public var audience: String?
    /// For the person's access token: the API (an RFC 8707 resource indicator, one of the configuration's
    /// `resources`) the token is for alone, got with a refresh that names it and kept per resource. With `audience`,
    /// sent along with the exchange.
    public var resource: String? = nil
    /// For a service account's access token: its scopes (nil: cloud-platform). For the person's: scopes their grant
    /// must hold (a tool's request), refused with the missing ones named; nil asks nothing.
    public var scopes: [String]?
    /// For a service account's ID token: whether it carries the `email` claim.
    public var includeEmail: Bool
    /// The token must stay valid this much longer; a refresh happens first otherwise.
    public var minimumValidity: Duration
    /// Refresh even when the stored token is fresh enough.
    public var forceRefresh: Bool
    /// The account (an e-mail or `sub`); nil for the current one.
    public var account: String?
    /// What provider families add to the request (Google's `forGoogleCloud` and `workloadIdentity`, ...), each a
    /// family's own type; the families' properties on `TokenRequest` are views of it.
    public var familyParameters = FamilyParameters()
    /// For a DPoP-bound access token (RFC 9449): the request to make a proof for, answered in
    /// `IssuedToken.dpopProof` with the token it names. Crosses the agent like the rest, so a forwarded session
    /// gets proofs without the key. Ignored for bearer tokens.
    public var proofFor: DPoPTarget? = nil
    /// Whose token: the principal the one token path mints for (see `Principal`). Setting it sets
    /// `serviceAccountChain`.
    public var principal: Principal {
        get {
            if !serviceAccountChain.isEmpty { return .serviceAccount(chain: serviceAccountChain) }
            return followsConfiguration ? .configured : .person
        }
        set {
            switch newValue {
            case .configured: (serviceAccountChain, followsConfiguration) = ([], true)
            case .person: (serviceAccountChain, followsConfiguration) = ([], false)
            case .serviceAccount(let chain): (serviceAccountChain, followsConfiguration) = (chain, false)
            }
        }
    }
    private var followsConfiguration = false

    /// Whether the configuration's `impersonate_service_account` chain applies when the request names none.
    @available(*, deprecated, message: "use principal = .configured (or .person)")
    public var appliesConfiguredChain: Bool {
        get { followsConfiguration && serviceAccountChain.isEmpty }
        set { followsConfiguration = newValue }
    }

    /// Whose token a request asks for.
    public enum Principal: Sendable, Equatable {
        /// As the configuration says: its `impersonate_service_account` chain, else the signed-in person (what the
        /// `signin` commands ask when no `--impersonate-service-account` is given, here or through an agent).
        case configured
        /// The signed-in person, whatever the configuration names.
        case person
        /// A service account, minted with the person's grant: the last e-mail is the service account, any before it
        /// delegates (gcloud's `--impersonate-service-account`).
        case serviceAccount(chain: [String])
    }

    /// Whether `s` can name a service account of a chain (`Principal.serviceAccount`): `NAME@DOMAIN` with letters,
    /// digits, `-`, `_` and `.` only, and a dot in the domain (`deployer@my-project.iam.gserviceaccount.com`). The
    /// agent checks every chain it is sent with this rule, whichever family answers it.
    package static func isServiceAccountName(_ s: String) -> Bool {
        let parts = s.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[1].contains("."), !parts[1].hasPrefix("."), !parts[1].hasSuffix("."), s.count <= 254 else { return false }
        return s.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-_.@".contains($0)) }
    }

    /// One request a DPoP proof is for: its HTTP method and URL.
    public struct DPoPTarget: Sendable, Equatable {
        /// The HTTP method, in capitals (`GET`, `POST`).
        public var method: String
        /// The URL (its query and fragment are left out of the proof).
        public var url: String

        public init(method: String, url: String) {
            self.method = method.uppercased()
            self.url = url
        }

        /// Why the target cannot be in a proof (a method of letters, an http(s) URL of visible ASCII), or nil.
        public var problem: String? {
            guard !method.isEmpty, method.utf8.count <= 16, method.utf8.allSatisfy({ (0x41...0x5A).contains($0) }) else { return "the method must be an HTTP method such as GET or POST" }
            guard url.hasPrefix("https://") || url.hasPrefix("http://"), url.utf8.count <= 4096, TokenResponse.isTokenText(url) else { return "the URL must be an http(s) URL" }
            return nil
        }
    }

    public init(kind: TokenKind = .access, serviceAccountChain: [String] = [], audience: String? = nil, scopes: [String]? = nil,
                includeEmail: Bool = true, minimumValidity: Duration = .seconds(60), forceRefresh: Bool = false, account: String? = nil) {
        self.kind = kind
        self.serviceAccountChain = serviceAccountChain
        self.audience = audience
        self.scopes = scopes
        self.includeEmail = includeEmail
        self.minimumValidity = minimumValidity
        self.forceRefresh = forceRefresh
        self.account = account
    }

    /// The most `minimumValidity` may ask (a day), as `signin token --min-ttl` takes it.
    public static let maximumValidity = 86_400
}

/// A provider family's part of a `TokenRequest`: a value of the family's own type, `init()` when the request says
/// nothing of it.
public protocol TokenRequestParameter: DefaultedValue {
    /// What this part adds to the name of what is asked, as the agent's log and questions say it (" for Google
    /// Cloud"), or nil when it adds nothing (it is its `init()`).
    var requestName: String? { get }
    /// What tells two requests of this part apart, for a forwarded session's approval of exactly one request.
    var approvalParts: [String] { get }
}

extension TokenRequest {
    /// The families' parts of the name of what is asked ("" when the request carries none).
    public var familyName: String {
        familyParameters.all.compactMap { ($0 as? any TokenRequestParameter)?.requestName }.joined()
    }

    /// The families' parts as a forwarded session's approval tells requests apart.
    package var familyApprovalParts: [String] {
        familyParameters.all.flatMap { ($0 as? any TokenRequestParameter)?.approvalParts ?? [] }
    }
}

/// The families' parts of a request, each found by its type.
public typealias FamilyParameters = DefaultedValues

extension TokenRequest {
    /// Refuses a request to `url` when it is not on the origin of `resource` (scheme, host and port): an API's token is
    /// for the API alone, whatever address a server names.
    package static func requireOwnOrigin(_ url: String, of resource: String) throws(SignInError) {
        guard EndpointURL.sameOrigin(url, resource) else {
            throw .unsupported(reason: "The token for \(resource.withoutControlCharacters) is handed out only for requests to its own origin; a request to \(url.withoutControlCharacters) got none")
        }
    }
}
