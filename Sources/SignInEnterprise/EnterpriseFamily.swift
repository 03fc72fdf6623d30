import SignInBase
import SignInTransport
import SignInProtocol
import SignInStorage
import SignInGrant
import SignInAPIAccess
import FoundationEssentials

/// MCP's enterprise-managed authorization as a provider family: with an `enterprise_authorization` section, the
/// person's token for an MCP server (`TokenRequest.resource`) the configuration does not list in `resources` is
/// bought with one sign-in at the company's IdP (the configured provider), never a browser per server.
///
/// `token(for:grant:)`'s tree:
/// 1. Not such a request (another kind, an audience, a service account, no section, a listed resource): not this
///    family's (nil).
/// 2. A token for the server kept in the entry, fresh enough: answered from the store, no network.
/// 3. Otherwise: the server's authorization servers, from its RFC 9728 metadata, and this client's registration at
///    one: the section's, else, at the first whose RFC 8414 document lists the id-jag grant profile
///    (`authorization_grant_profiles_supported`), the one signin registered there (RFC 7591: a public client for the
///    jwt-bearer grant), kept as a record and registered now when none is kept. None of either: `.unsupported`,
///    saying the server takes no enterprise sign-in here and how to sign in to it on its own; nothing asked of the
///    IdP or sent there.
/// 4. The person's ID token (refreshed at the IdP first when it has expired) traded at the IdP for an ID-JAG, then
///    redeemed at the server's authorization server (`IdentityAssertionGrant`); an IdP refusing the ID token
///    (`invalid_grant`) gets one refresh of the ID token and one more try. A policy refusal (`invalid_target`,
///    `access_denied`), or the server's authorization server refusing the assertion (`invalid_grant` there), is
///    `.targetRefused`, naming the server; nothing is kept.
/// 5. The access token is kept encrypted in the entry under the server (`idjag|URL`) until it expires.
public struct EnterpriseFamily: TokenFamily {
    public init() {}

    /// The kind of the tokens this family keeps in an entry: one per MCP server.
    public static let kind = DerivedTokenKey.Kind("idjag")

    public var configurationSection: (any ConfigurationSection.Type)? { EnterpriseAuthorizationSettings.self }
    public var forwardedSettingKeys: [String] { [] }
    public func forwardedSettings(_ configuration: SignInConfiguration) -> [String: String] { [:] }
    public func configuredChain(_ configuration: SignInConfiguration) -> [String] { [] }
    package func scopeRules(for request: TokenRequest, configuration: SignInConfiguration) -> ProviderRules? { nil }

    /// Step 1: whether `request` is this family's.
    package func serves(_ request: TokenRequest, configuration: SignInConfiguration) -> Bool {
        guard request.kind == .access, let resource = request.resource, request.audience == nil, request.serviceAccountChain.isEmpty,
              configuration.enterpriseAuthorization.isEnabled else { return false }
        return !configuration.resources.contains(resource)
    }

    public func token(for request: TokenRequest, grant: any PersonGrant) throws(SignInError) -> IssuedToken? {
        let configuration = grant.configuration
        guard serves(request, configuration: configuration), let resource = request.resource else { return nil }
        let settings = configuration.enterpriseAuthorization
        // A forced refresh is a new exchange: nothing kept is fresh enough for it.
        let validity = request.forceRefresh ? Duration.seconds(TokenRequest.maximumValidity * 2) : request.minimumValidity
        let token: SignInToken
        do throws(SignInError) {
            token = try buy(resource, request: request, validity: validity, grant: grant, settings: settings)
        } catch .providerError(let endpoint, "invalid_grant", _) where endpoint.hasPrefix(IdentityAssertionGrant.idpEndpointName) {
            // The IdP refused even a fresh ID token: the session there ended. A new sign-in at the IdP is the way on.
            throw .noPreviousSignIn(reason: .nothingStored(issuer: "\(configuration.issuer) (its session ended: it refused this sign-in's ID token for \(resource.withoutControlCharacters); sign in again with `signin login`)"))
        }
        guard let stored = try grant.credentials(account: request.account) else { throw grant.noAccount() }
        var issued = IssuedToken(token: token, kind: .access, subject: stored.profile.userID, name: stored.profile.email ?? stored.profile.userID)
        issued.resource = resource
        return issued
    }

    /// The MCP servers' tokens kept in `entry` (bought through the enterprise sign-in), by server, with their expiry.
    public static func keptTokens(in entry: StoredCredentials) -> [(server: String, expiry: Date)] {
        let prefix = kind.name + "|"
        return (entry.derivedTokens ?? []).filter { $0.key.hasPrefix(prefix) }
            .map { (String($0.key.dropFirst(prefix.count)), $0.expiry) }.sorted { $0.server < $1.server }
    }

    /// Whether the MCP server at `resource` signs in at an authorization server the configuration's section holds a
    /// registration for, or one whose metadata lists the id-jag grant profile (the metadata read; false when there is
    /// none, or none can be read): a program with a person at hand (`signin mcp`) decides so at its start between this
    /// family and the server's own sign-in.
    public static func takesIdentityAssertion(for resource: String, configuration: SignInConfiguration) -> Bool {
        let settings = configuration.enterpriseAuthorization
        guard settings.isEnabled, (try? HTTPClient.loadLibrary()) != nil else { return false }
        let http = HTTPClient(configuration: configuration)
        let read = Read(resource: resource, network: configuration.network)
        guard let metadata = try? read.resourceMetadata(http: http) else { return false }
        if registration(among: metadata.authorizationServers, settings) != nil { return true }
        return metadata.authorizationServers.contains { (try? read.server($0, http: http))?.takesIdentityAssertions == true }
    }

    /// A server's RFC 9728 document and its authorization servers' RFC 8414 ones, as this process read them for
    /// `resource` within the last 30 seconds: `takesIdentityAssertion` decides with them at `signin mcp`'s start and
    /// for `login --resource`, and the purchase that follows a moment later (step 3) uses them instead of asking the
    /// server again (two to four requests fewer at those starts). Only what was read for the same resource over the
    /// same network settings; a purchase later on (a renewal an hour on) reads them anew.
    private struct Read {
        let resource: String
        /// The resource and the network settings it is read over.
        let key: String

        init(resource: String, network: NetworkSettings) {
            self.resource = resource
            key = [resource, network.caFile ?? "", network.proxy ?? ""].joined(separator: "\n")
        }

        private struct Documents {
            var at: Double
            var resource: ProtectedResourceMetadata?
            var servers: [String: AuthorizationServerMetadata] = [:]
        }
        private static let kept = Locked<[String: Documents]>([:])
        private static let lifetime = 30.0

        /// The documents kept for this resource while they are younger than `lifetime`; older ones go.
        private func live(_ all: inout [String: Documents]) -> Documents? {
            guard let d = all[key], MonotonicClock.now() - d.at < Self.lifetime else {
                all[key] = nil
                return nil
            }
            return d
        }

        private func documents() -> Documents? { Self.kept.withLock { live(&$0) } }

        private func keep(_ change: (inout Documents) -> Void) {
            Self.kept.withLock { all in
                var d = live(&all) ?? Documents(at: MonotonicClock.now())
                change(&d)
                all[key] = d
            }
        }

        /// The server's RFC 9728 document, as read a moment ago or read now.
        func resourceMetadata(http: HTTPClient) throws(SignInError) -> ProtectedResourceMetadata {
            if let kept = documents()?.resource { return kept }
            let read = try ProtectedResourceMetadata.discover(for: resource, http: http).metadata
            keep { $0.resource = read }
            return read
        }

        /// The authorization server `issuer`'s RFC 8414 document, as read a moment ago or read now.
        func server(_ issuer: String, http: HTTPClient) throws(SignInError) -> AuthorizationServerMetadata {
            if let kept = documents()?.servers[issuer] { return kept }
            let read = try Discovery.discoveredServer(issuer: issuer, http: http)
            keep { $0.servers[issuer] = read }
            return read
        }
    }

    /// The kind of the records of the registrations signin made itself (`PersonGrant.keepFamilyRecord`), by issuer.
    static let registrationRecord = "idjag-registration"

    /// Step 3's registration and the authorization server's metadata: the section's for one of `servers`, else at
    /// the first that lists the id-jag profile, kept or made (RFC 7591); nil when there is neither.
    private static func registration(among servers: [String], settings: EnterpriseAuthorizationSettings, grant: any PersonGrant,
                                     read: Read, http: HTTPClient) throws(SignInError) -> (issuer: String, registration: EnterpriseAuthorizationSettings.Registration, server: AuthorizationServerMetadata)? {
        if let (issuer, registration) = registration(among: servers, settings) {
            return (issuer, registration, try read.server(issuer, http: http))
        }
        for issuer in servers {
            guard let server = try? read.server(issuer, http: http), server.takesIdentityAssertions else { continue }
            if let kept = grant.familyRecord(kind: registrationRecord, name: issuer), kept["issuer"]?.string == issuer,
               let id = kept["client_id"]?.string, !id.isEmpty {
                let secret = kept["client_secret"]?.string
                return (issuer, .init(clientID: id, clientSecret: secret, tokenEndpointAuthMethod: kept["token_endpoint_auth_method"]?.string), server)
            }
            guard let endpoint = server.registrationEndpoint, EndpointURL.problem(endpoint) == nil else {
                throw .unsupported(reason: "\(issuer.withoutControlCharacters) takes ID-JAGs but lets no client register itself (no registration_endpoint): ask your administrator to add this client's registration there to enterprise_authorization")
            }
            let made = try IdentityAssertionGrant.register(at: endpoint, issuer: issuer, methods: server.tokenEndpointAuthMethodsSupported, http: http)
            var record: [String: JSONValueOut] = ["issuer": .string(issuer), "client_id": .string(made.clientID),
                                                  "token_endpoint_auth_method": .string(made.tokenEndpointAuthMethod)]
            if let secret = made.clientSecret { record["client_secret"] = .string(secret) }
            try grant.keepFamilyRecord(JSONValueOut.object(record).text, kind: registrationRecord, name: issuer)
            return (issuer, made, server)
        }
        return nil
    }

    /// The first of `servers` (an MCP server's authorization servers) the section holds a registration for.
    private static func registration(among servers: [String], _ settings: EnterpriseAuthorizationSettings) -> (issuer: String, registration: EnterpriseAuthorizationSettings.Registration)? {
        servers.lazy.compactMap { i in settings.registration(at: i).map { (i, $0) } }.first
    }

    /// Steps 2 to 5.
    private func buy(_ resource: String, request: TokenRequest, validity: Duration, grant: any PersonGrant,
                     settings: EnterpriseAuthorizationSettings) throws(SignInError) -> SignInToken {
        let configuration = grant.configuration
        return try grant.derivedCredential(DerivedTokenKey(Self.kind, [resource]), account: request.account, minimumValidity: validity,
                                                            buyingWith: .id, retryWhen: { $0 == "invalid_grant" }, bearer: nil) { (idToken) throws(SignInError) -> SignInToken in
            guard let stored = try grant.credentials(account: request.account) else { throw grant.noAccount() }
            try HTTPClient.loadLibrary()
            let http = HTTPClient(configuration: configuration)
            // Step 3: where the server signs in, and this client's registration there.
            let read = Read(resource: resource, network: configuration.network)
            let metadata = try read.resourceMetadata(http: http)
            guard let (issuer, registration, server) = try Self.registration(among: metadata.authorizationServers, settings: settings, grant: grant, read: read, http: http) else {
                throw .unsupported(reason: "\(resource.withoutControlCharacters) signs in at \(metadata.authorizationServers.first?.withoutControlCharacters ?? "no authorization server"), which neither lists the id-jag grant profile nor has a registration in the configuration's enterprise_authorization: it takes no enterprise sign-in here. Nothing was asked of the identity provider; sign in to it on its own with `signin login --resource \(resource.withoutControlCharacters)` (or ask your administrator to add its registration)")
            }
            guard let tokenEndpoint = server.tokenEndpoint, EndpointURL.problem(tokenEndpoint) == nil else {
                throw .providerError(endpoint: "the metadata of \(issuer.withoutControlCharacters)", code: "invalid_token_endpoint", detail: "no usable token_endpoint")
            }
            // Step 4.
            let idp = IdentityAssertionGrant(http: http, idpTokenEndpoint: stored.endpoints.tokenEndpoint.absoluteString,
                                             idpClient: ClientAuthentication(clientID: configuration.clientID, clientSecret: configuration.clientSecret),
                                             idpMethod: configuration.tokenEndpointAuthMethod)
            let assertion = try idp.identityAssertion(idToken: idToken, audience: server.issuer.isEmpty ? issuer : server.issuer, resource: resource, scope: request.scopes?.joined(separator: " "))
            do throws(SignInError) {
                return try IdentityAssertionGrant.redeem(assertion, at: tokenEndpoint, issuer: issuer, registration: registration, http: http, now: Date())
            } catch .providerError(let endpoint, "invalid_grant", let detail) {
                // The server's authorization server refused the assertion (its client, its audience, its policy): a
                // fresh ID token at the IdP would not change that, so it is not retried as the IdP's refusal is.
                throw .targetRefused(endpoint: endpoint, target: resource, detail: "invalid_grant" + (detail.map { ": " + $0 } ?? ""))
            }
        }
    }
}
