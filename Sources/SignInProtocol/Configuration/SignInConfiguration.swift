import SignInBase
import SignInTransport
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// What `signin` needs to know about the OAuth client and the provider, read from a JSON file.
///
/// ```json
/// { "client_id": "123.apps.googleusercontent.com", "client_secret": "GOCSPX-...",
///   "scopes": ["openid", "email", "profile"] }
/// ```
public struct SignInConfiguration: Sendable, Equatable, CustomStringConvertible {
    /// The OAuth client ID (required).
    public var clientID: String
    /// The client secret, for clients that have one (Google desktop clients do; it is not secret there).
    public var clientSecret: String?
    /// Scopes to ask for. Default `openid email profile`.
    public var scopes: [String]
    /// The OpenID issuer; endpoints come from its discovery document. Default: the default provider's (Google's,
    /// which SignInKit's families bring).
    public var issuer: String
    /// The providers the families this configuration was read with know by name (`ProviderFamilies`).
    package var families = ProviderFamilies([])
    /// Endpoints that override discovery; when authorization, token and JWKS are all given, discovery is skipped.
    public var endpoints: EndpointOverrides
    /// Loopback port for the redirect; 0 lets the system choose a free one.
    public var redirectPort: Int
    /// Path of the redirect URI on the loopback listener.
    public var redirectPath: String
    /// The host the redirect URI names: `127.0.0.1` (the default, RFC 8252 7.3), or `localhost` for providers
    /// that register only `http://localhost` (AWS Cognito, some smallstep set-ups). The listener binds the loopback
    /// addresses and checks who connects either way.
    public var redirectHost: String = "127.0.0.1"
    /// Suggests an account to the provider (`login_hint`).
    public var loginHint: String?
    /// Extra parameters added to the authorization URL as given (for example `prompt`).
    public var extraAuthorizationParameters: [String: String]
    /// Time allowed for each request to the provider (connect and answer), in whole seconds from 1 to 300.
    /// Default 30 seconds.
    public var httpTimeout: Duration {
        get { .seconds(httpTimeoutSeconds) }
        set { httpTimeoutSeconds = min(300, max(1, newValue.wholeSecondsRoundedUp)) }
    }
    var httpTimeoutSeconds: Int
    /// A PEM file of certificate authorities to trust instead of the system's (a corporate proxy, a test CA).
    public var caFile: String?
    /// The proxy every request beyond this machine goes through (`proxy`; nil: as the environment says).
    public var proxy: String?
    /// `ca_file` and `proxy` together: what an API's sign-in found from its address takes of this configuration.
    public var network: NetworkSettings {
        get { NetworkSettings(caFile: caFile, proxy: proxy) }
        set { (caFile, proxy) = (newValue.caFile, newValue.proxy) }
    }
    /// The loopback listener answers only connections from this user's own processes (default). Turn off only
    /// where the browser's connection is relayed through another user (WSL's localhost relay, some containers).
    public var listenerSameUserOnly: Bool
    /// The APIs the sign-in asks for (`resources`, RFC 8707 resource indicators: absolute URIs without a fragment),
    /// one `resource` parameter each on the authorization request; `TokenRequest.resource` then gets an access token
    /// for one of them alone. Empty: none asked for.
    public var resources: [String] = []
    /// How this configuration came to be: by a person (a file, or code), or found from an API's address alone
    /// (`APIAccess`). A server found from an API is discovered in the Model Context Protocol's order (RFC 8414 first)
    /// and asked for `resource` on every token request.
    package var foundFromAPI = false
    /// For a sign-in to an API that replaces the client and scopes kept for it (a step-up needing a new client, a
    /// client the server forgot): the records to keep once the new sign-in has succeeded, and not before, so that a
    /// failed or cancelled sign-in leaves the old client and its grant in use (what they hold is SignInAPIAccess's).
    package var recordsAfterSignIn: RecordsAfterSignIn?
    /// How the client is known at the server: registered by hand (the configuration's `client_id`), registered by
    /// signin (an API's sign-in from its address), or a client ID metadata document (`client_id` is its URL).
    public var clientKind: ClientIdentity.Kind = .configured
    /// The https URL of a client ID metadata document (draft-ietf-oauth-client-id-metadata-document) the person's
    /// organisation hosts (`client_id_metadata_document`; `signin client-metadata` prints the document): where a
    /// server found from an API says `client_id_metadata_document_supported`, this URL is signin's `client_id` there,
    /// and nothing is registered.
    public var clientIDMetadataDocument: String?
    /// A configuration for API sign-ins alone: no `client_id` of its own (no provider to sign in at but the ones APIs
    /// name), only what API sign-ins take: a `client_id_metadata_document`, a `ca_file` (a company CA), an
    /// `http_timeout`.
    public var isForAPIsOnly: Bool { clientID.isEmpty && (clientIDMetadataDocument != nil || apiSettingsOnly) }
    /// Read from a file with no `client_id` and only the settings API sign-ins take (`isForAPIsOnly`).
    package var apiSettingsOnly = false
    /// Whether the sign-in expects an ID token: `openid` is among the scopes. Without one, the person's identity
    /// comes from a userinfo endpoint when there is one, else the account is named by the server and the API.
    public var asksForIDToken: Bool { scopes.contains("openid") }
    /// The API a grant is for alone, when it is for one: a sign-in found from an API's address, or a plain OAuth 2.0
    /// configuration (no `openid`) with one resource. Every token request of such a grant names it (`resource` on the
    /// code exchange and each refresh, RFC 8707 2.2, as the Model Context Protocol requires), and its own access token
    /// is that API's.
    public var grantAPI: String? { resources.count == 1 && (foundFromAPI || !asksForIDToken) ? resources[0] : nil }

    /// This configuration's client at its provider, and how it is known there: what its credentials are kept under.
    /// A client ID metadata document is one client ID for every API behind a server, so an API's sign-in through one
    /// is kept under the API as well (`storeClientID`): two APIs never share, replace or sign out each other's grant.
    public var identity: ClientIdentity { ClientIdentity(issuer: issuer, clientID: storeClientID, kind: clientKind) }

    /// The client ID the store keys this configuration's accounts by: `clientID`, and for an API's sign-in through a
    /// client ID metadata document, `clientID` and the API (a space apart: no URL holds one). The wire always
    /// carries `clientID` itself.
    public var storeClientID: String {
        guard foundFromAPI, clientKind == .metadataDocument, let api = grantAPI else { return clientID }
        return clientID + " " + api
    }

    /// Whether `uri` can be a resource indicator (RFC 8707 2: an absolute URI, no fragment; https, or http on
    /// loopback as for any endpoint here).
    public static func isValidResource(_ uri: String) -> Bool {
        guard !uri.contains("#"), !uri.contains(where: { $0.isWhitespace || $0.asciiValue.map { $0 < 0x20 } ?? false }),
              let colon = uri.firstIndex(of: ":"), colon > uri.startIndex else { return false }
        let scheme = uri[..<colon].lowercased()
        guard scheme.allSatisfy({ $0.isLetter || $0.isNumber || "+-.".contains($0) }), scheme.first?.isLetter == true else { return false }
        if scheme == "https" || scheme == "http" { return EndpointURL.problem(uri) == nil }
        return uri.count > colon.utf16Offset(in: uri) + 1
    }

    /// How the client secret goes to the token endpoint (`token_endpoint_auth_method`): `client_secret_basic` or
    /// `client_secret_post`. Nil: as the provider's discovery document says, HTTP Basic when it says nothing.
    public var tokenEndpointAuthMethod: String?
    /// The provider families' sections (Google's, AWS's, ...), each read by its family's code; a family's
    /// properties (`impersonateServiceAccount`, `awsRegion`, ...) are views of its section.
    public var sections = ConfigurationSections()
    /// The program this configuration belongs to (`loadDefault(appName:)`): a `SignInClient` made with it keeps
    /// its credentials in `$XDG_DATA_HOME/<appName>`, apart from the `signin` command's. Nil: the `signin` command's.
    public var appName: String?
    /// Whether the authorization request is pushed to the provider first and the browser opens with only its
    /// `request_uri` (RFC 9126, `pushed_authorization`): `auto` (default) where discovery lists the endpoint.
    public var pushedAuthorization: PushedAuthorization = .auto
    /// Whether the grant is bound to a key of this machine with DPoP proofs (RFC 9449, `dpop`): `auto` (default)
    /// where discovery lists ES256 in `dpop_signing_alg_values_supported`.
    public var proofOfPossession: ProofOfPossession = .auto
    /// The file this configuration came from, named in every error about it.
    public var sourcePath: String

    /// The configuration without its client secret, for logs and test failures.
    public var description: String {
        "SignInConfiguration(\(sourcePath): client \(clientID)\(clientSecret == nil ? "" : ", secret set"), issuer \(issuer), scopes \(scopes.joined(separator: " ")))"
    }

    /// Explicit endpoint URLs; nil means "from discovery". Each must be https (or http to this machine only);
    /// one that is not is a `.configInvalid` error when the client first needs the endpoints.
    public struct EndpointOverrides: Sendable, Equatable {
        package var authorization: String?
        package var token: String?
        package var revocation: String?
        package var userinfo: String?
        package var jwks: String?
        package var deviceAuthorization: String?
        var pushedAuthorization: String?

        /// The authorization endpoint (where the browser goes).
        public var authorizationEndpoint: URL? {
            get { authorization.flatMap { URL(string: $0) } }
            set { authorization = newValue?.absoluteString }
        }
        /// The token endpoint (code exchange and refresh).
        public var tokenEndpoint: URL? {
            get { token.flatMap { URL(string: $0) } }
            set { token = newValue?.absoluteString }
        }
        /// The revocation endpoint (RFC 7009), used by `disconnect()`.
        public var revocationEndpoint: URL? {
            get { revocation.flatMap { URL(string: $0) } }
            set { revocation = newValue?.absoluteString }
        }
        /// The userinfo endpoint, for profile fields the ID token lacks.
        public var userinfoEndpoint: URL? {
            get { userinfo.flatMap { URL(string: $0) } }
            set { userinfo = newValue?.absoluteString }
        }
        /// The JSON Web Key Set that signs ID tokens.
        public var jwksURI: URL? {
            get { jwks.flatMap { URL(string: $0) } }
            set { jwks = newValue?.absoluteString }
        }
        /// The device authorization endpoint (RFC 8628).
        public var deviceAuthorizationEndpoint: URL? {
            get { deviceAuthorization.flatMap { URL(string: $0) } }
            set { deviceAuthorization = newValue?.absoluteString }
        }
        /// The pushed authorization request endpoint (RFC 9126).
        public var pushedAuthorizationRequestEndpoint: URL? {
            get { pushedAuthorization.flatMap { URL(string: $0) } }
            set { pushedAuthorization = newValue?.absoluteString }
        }
        /// No overrides: everything from discovery.
        public init() {}
    }

    /// Whether the authorization request is pushed first (RFC 9126, `pushed_authorization`).
    public enum PushedAuthorization: String, Sendable, Equatable, CaseIterable {
        /// When the provider lists a pushed authorization request endpoint (default).
        case auto
        /// Always; a provider without the endpoint is an error.
        case always
        /// Never; a provider that requires it is an error that says so.
        case never
    }

    /// When a sign-in binds its grant to a key with DPoP (RFC 9449).
    public enum ProofOfPossession: String, Sendable, Equatable, CaseIterable {
        /// When the provider's discovery lists ES256 among `dpop_signing_alg_values_supported` (default).
        case auto
        /// Always; a provider that does not list ES256 is an error.
        case always
        /// Never: bearer tokens.
        case never
    }

    /// A configuration built in code. `issuer` nil: the default provider's, which a `SignInClient` sets (Google's,
    /// from SignInGoogle; `issuer` is empty until then). `appName` keeps the program's credentials apart from the
    /// `signin` command's (in `$XDG_DATA_HOME/<appName>`); nil shares the command's store.
    public init(clientID: String, clientSecret: String? = nil, scopes: [String] = ["openid", "email", "profile"],
                issuer: String? = nil, redirectPort: Int = 0, redirectPath: String = "/callback",
                appName: String? = nil) {
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.scopes = scopes
        self.issuer = issuer ?? ""
        self.endpoints = EndpointOverrides()
        self.redirectPort = redirectPort
        self.redirectPath = redirectPath
        self.loginHint = nil
        self.extraAuthorizationParameters = [:]
        self.httpTimeoutSeconds = 30
        self.caFile = nil
        self.listenerSameUserOnly = true
        self.tokenEndpointAuthMethod = nil
        self.appName = appName
        self.sourcePath = "(in code)"
    }

    /// What is special about this configuration's provider: the rules its families name for its issuer
    /// (`ProviderFamilies`), else the standards as they are.
    package var providerRules: ProviderRules { families.rules(for: issuer) ?? .standard(issuer) }

    /// Takes the providers `families` know: an issuer left to the default becomes the default provider's, and an
    /// issuer a family knows under another spelling its canonical one. (`SignInClient` does this for a configuration
    /// built in code; `parse` for a file.)
    package mutating func adopt(_ families: ProviderFamilies) {
        self.families = families
        if issuer.isEmpty, let d = families.defaultIssuer { issuer = d }
        if let rules = families.rules(for: issuer) { issuer = rules.issuer }
    }

    static let knownFields: Set<String> = [
        "client_id", "client_secret", "scopes", "issuer", "authorization_endpoint", "token_endpoint",
        "revocation_endpoint", "userinfo_endpoint", "jwks_uri", "device_authorization_endpoint",
        "pushed_authorization_request_endpoint", "pushed_authorization",
        "redirect_port", "redirect_path", "redirect_host", "login_hint", "extra_authorization_parameters", "http_timeout", "ca_file", "proxy", "listener_same_user_only", "resources", "client_id_metadata_document", "token_endpoint_auth_method", "dpop",
        "$comment",
    ]

    /// Parses configuration JSON: the core's keys here, each of `sections` its own; a key none of them owns is
    /// refused with a suggestion. `sourcePath` is used in error messages. (SignInKit's `parse(_:sourcePath:)` passes
    /// every registered family's section.)
    public static func parse(_ data: Data, sourcePath: String, sections: [any ConfigurationSection.Type]) throws(SignInError) -> SignInConfiguration {
        try parse(data, sourcePath: sourcePath, sections: sections, providers: ProviderFamilies(sections))
    }

    /// As `parse(_:sourcePath:sections:)`, with the families that know providers by name given apart (`providers`:
    /// SignInKit's token families; a section of settings alone, the key storage's, names none and is not asked).
    package static func parse(_ data: Data, sourcePath: String, sections: [any ConfigurationSection.Type], providers: ProviderFamilies) throws(SignInError) -> SignInConfiguration {
        func fail(_ field: String?, _ reason: String) -> SignInError { .configInvalid(file: sourcePath, field: field, reason: reason) }
        // One pass: valid JSON, one object, no field given twice (valid JSON, but the person meant one of them).
        var parser = JSONParser(bytes: Array(data), refusingDuplicates: true)
        guard data.count <= 1 << 20, case .object(let obj)? = try? parser.document() else {
            // Say where the JSON goes wrong, or which field is there twice, or that it is valid but not an object.
            if let problem = JSONSyntax.firstError(in: Array(data), refusingDuplicates: true) {
                let twice = problem.reason.contains("appears twice")
                throw fail(nil, (twice ? "" : "not valid JSON ") + "at line \(problem.line), column \(problem.column): \(problem.reason)")
            }
            throw fail(nil, "not a JSON object (expected {\"client_id\": ...})")
        }
        // The core's keys are read as every section reads its own: the core's first, then each family's section; a
        // key nobody owns is said before anything a read found wrong (a misspelt key is the likelier mistake), but
        // looked for last, once every owner was met in the order a reader meets them.
        let fields = ConfigurationFields(object: obj, sourcePath: sourcePath)
        let c: SignInConfiguration
        do throws(SignInError) {
            c = try read(fields, sections: sections, providers: providers)
        } catch {
            try refuseUnknownKeys(fields, sections: sections)
            throw error
        }
        try refuseUnknownKeys(fields, sections: sections)
        return c
    }

    /// Refuses a key neither the core nor a section owns, with the nearest known one when there is one.
    private static func refuseUnknownKeys(_ fields: ConfigurationFields, sections: [any ConfigurationSection.Type]) throws(SignInError) {
        let knownFields = knownFields.union(sections.flatMap { $0.keys })
        for key in fields.object.keys.sorted() where !knownFields.contains(key) {
            let known = knownFields.filter { $0 != "$comment" }.sorted()
            if let near = Suggest.nearest(key, among: known) { throw fields.fail(key, "unknown field (did you mean \"\(near)\"?)") }
            throw fields.fail(key, "unknown field (known: \(known.joined(separator: ", ")))")
        }
    }

    /// The core's keys, then each section's.
    private static func read(_ fields: ConfigurationFields, sections: [any ConfigurationSection.Type], providers: ProviderFamilies) throws(SignInError) -> SignInConfiguration {
        let (obj, sourcePath) = (fields.object, fields.sourcePath)
        func fail(_ field: String?, _ reason: String) -> SignInError { fields.fail(field, reason) }
        func string(_ key: String) throws(SignInError) -> String? { try fields.string(key) }
        func url(_ key: String) throws(SignInError) -> String? { try fields.url(key) }
        // A file with no client of its own configures API sign-ins alone when it holds a client ID metadata document,
        // or only what API sign-ins take (a company CA, a timeout, where the store key lives): what an administrator
        // deploys for a company network. Any other key without a client_id is the client_id missing.
        let apiSettings: Set<String> = ["ca_file", "proxy", "http_timeout", "$comment", "key_storage", "key_cache_seconds", "listener_same_user_only"]
        let forAPIsOnly = obj["client_id"] == nil && (obj["client_id_metadata_document"] != nil
            || (obj["ca_file"] != nil || obj["proxy"] != nil || obj["http_timeout"] != nil) && obj.keys.allSatisfy(apiSettings.contains))
        guard let clientID = try string("client_id") ?? (forAPIsOnly ? "" : nil) else { throw fail("client_id", "missing (the OAuth client ID from your provider)") }
        var c = SignInConfiguration(clientID: clientID, issuer: try url("issuer"))
        c.sourcePath = sourcePath
        c.apiSettingsOnly = forAPIsOnly
        // Kept exactly as given (some issuers end in "/", as Auth0's, and ID tokens must name it exactly), unless a
        // family knows it under another spelling; none given: the default provider's.
        c.adopt(providers)
        let rules = c.providerRules
        if let placeholder = rules.placeholderClient, clientID == placeholder.clientID {
            throw fail("client_id", "is still the example's placeholder. \(placeholder.advice)")
        }
        c.clientSecret = try string("client_secret")
        if let v = obj["scopes"] {
            if let s = v.string {
                c.scopes = s.split(separator: " ").map(String.init)
            } else if let a = v.array {
                var scopes: [String] = []
                for item in a {
                    guard let s = item.string, !s.isEmpty, !s.contains(" ") else { throw fail("scopes", "each scope must be a non-empty string without spaces") }
                    scopes.append(s)
                }
                c.scopes = scopes
            } else {
                throw fail("scopes", "must be a list of strings or a space-separated string")
            }
            if c.scopes.isEmpty { throw fail("scopes", "must not be empty") }
        }
        // OpenID's scope is added, as a sign-in verifies an ID token, except for an OAuth app of a server without
        // discovery: endpoints named by hand, no JWKS, and scopes that leave `openid` out on purpose (GitHub-style).
        let plainOAuthApp = obj["scopes"] != nil && obj["authorization_endpoint"] != nil && obj["token_endpoint"] != nil && obj["jwks_uri"] == nil
        if !c.scopes.contains("openid") && !plainOAuthApp { c.scopes.insert("openid", at: 0) }
        c.endpoints.authorization = try url("authorization_endpoint")
        c.endpoints.token = try url("token_endpoint")
        c.endpoints.revocation = try url("revocation_endpoint")
        c.endpoints.userinfo = try url("userinfo_endpoint")
        c.endpoints.jwks = try url("jwks_uri")
        c.endpoints.deviceAuthorization = try url("device_authorization_endpoint")
        c.endpoints.pushedAuthorization = try url("pushed_authorization_request_endpoint")
        // Endpoints and no issuer (a GitHub-style app): the server they name is the provider, not the default one
        // (none of its parameters, and its own name in `status`), unless they are the default provider's own.
        if obj["issuer"] == nil, let authorization = c.endpoints.authorization, c.endpoints.token != nil,
           let origin = EndpointURL.origin(of: authorization), !rules.owns(endpoint: authorization) {
            c.issuer = origin
        }
        guard !c.issuer.isEmpty else { throw fail("issuer", "missing (the provider's address, such as https://accounts.example.com)") }
        if let p = try string("pushed_authorization") {
            guard let mode = PushedAuthorization(rawValue: p) else { throw fail("pushed_authorization", "must be auto, always or never") }
            c.pushedAuthorization = mode
        }
        if let p = try string("dpop") {
            guard let mode = ProofOfPossession(rawValue: p) else { throw fail("dpop", "must be auto, always or never") }
            c.proofOfPossession = mode
        }
        if let v = obj["redirect_port"], v != .null {
            guard case .number = v, let p = v.int, (0...65535).contains(p) else { throw fail("redirect_port", "must be a whole number from 0 to 65535 (0: any free port)") }
            c.redirectPort = p
        }
        if let h = try string("redirect_host") {
            guard h == "127.0.0.1" || h == "localhost" else { throw fail("redirect_host", "must be \"127.0.0.1\" or \"localhost\"") }
            c.redirectHost = h
        }
        if let p = try string("redirect_path") {
            guard p.hasPrefix("/"), !p.contains("?"), !p.contains("#"), !p.contains(" ") else { throw fail("redirect_path", "must start with / and hold no query, fragment or space") }
            c.redirectPath = p
        }
        if let v = obj["http_timeout"], v != .null {
            guard case .number = v, let t = v.int, (1...300).contains(t) else { throw fail("http_timeout", "must be a whole number of seconds from 1 to 300") }
            c.httpTimeoutSeconds = t
        }
        if let ca = try string("ca_file") {
            guard ca.hasPrefix("/"), Posix.access(ca, R_OK) == 0 else { throw fail("ca_file", "\"\(ca)\" is not a readable file (give an absolute path)") }
            c.caFile = ca
        }
        if let p = try string("proxy") {
            if let problem = NetworkSettings.proxyProblem(p) { throw fail("proxy", problem) }
            c.proxy = p
        }
        if let v = obj["listener_same_user_only"], v != .null {
            guard case .bool(let b) = v else { throw fail("listener_same_user_only", "must be true or false") }
            c.listenerSameUserOnly = b
        }
        if let m = try string("token_endpoint_auth_method") {
            guard ["client_secret_basic", "client_secret_post"].contains(m) else { throw fail("token_endpoint_auth_method", "must be client_secret_basic or client_secret_post") }
            c.tokenEndpointAuthMethod = m
        }
        if let v = obj["resources"], v != .null {
            guard case .array(let items) = v else { throw fail("resources", "must be a list of the APIs' URIs, such as [\"https://api.example.com/\"]") }
            c.resources = try items.map { item throws(SignInError) -> String in
                guard let r = item.string, SignInConfiguration.isValidResource(r) else {
                    throw fail("resources", "\(item.string.map { "\"\($0.withoutControlCharacters)\"" } ?? "each entry") is not a resource indicator (an absolute https URI without a fragment; http only on loopback)")
                }
                return r
            }
        }
        if let document = try url("client_id_metadata_document") {
            // The draft: an https URL with a path (loopback http is allowed for a local server, as for any endpoint).
            guard let u = URL(string: document), u.path.count > 1, u.query == nil, u.fragment == nil else {
                throw fail("client_id_metadata_document", "must be an https URL with a path and no query or fragment, where the document `signin client-metadata` prints is hosted")
            }
            c.clientIDMetadataDocument = document
            if document == clientID { c.clientKind = .metadataDocument }
        }
        c.loginHint = try string("login_hint")
        if let v = obj["extra_authorization_parameters"], v != .null {
            guard case .object(let o) = v else { throw fail("extra_authorization_parameters", "must be an object of strings") }
            let reserved: Set<String> = ["client_id", "redirect_uri", "response_type", "state", "nonce", "code_challenge", "code_challenge_method", "scope"]
            for (k, val) in o {
                guard let s = val.string else { throw fail("extra_authorization_parameters", "\"\(k)\" must be a string") }
                guard !reserved.contains(k) else { throw fail("extra_authorization_parameters", "\"\(k)\" is set by signin and cannot be overridden") }
                c.extraAuthorizationParameters[k] = s
            }
        }
        // A section the file gives none of its keys is its `init()`, which its own read would make too: not run, so
        // a configuration without a family's keys never runs that family's code.
        for section in sections where section.keys.contains(where: { obj[$0] != nil }) { try c.read(section, from: fields) }
        return c
    }
}

extension SignInConfiguration {
    fileprivate mutating func read<Section: ConfigurationSection>(_ type: Section.Type, from fields: ConfigurationFields) throws(SignInError) {
        sections[type] = try Section(from: fields)
    }
}
