import SignInBase
import SignInProtocol
import SignInStorage
import SignInGrant
import SignInTransport
import FoundationEssentials

/// The OAuth layer of any HTTP client for one API (an MCP server, say): the headers for each request, and what each
/// answer means. Made for the API's address alone; it signs in where the API says (`APIAccess`), once, and after that
/// restores silently, across runs, from the store the `signin` command shares.
///
/// For each request, `headers(method:url:)` gives `Authorization` (and `DPoP` with a proof, for a bound grant) with
/// the API's own token, answered from memory while it is fresh, and only for a request to the API's own origin. For
/// each answer, `decide(status:wwwAuthenticate:afterRetry:)` says, in this order:
///
/// 1. Not a 401 or 403: `.done`.
/// 2. A 401 whose challenge (`WWW-Authenticate`, RFC 6750 and RFC 9728) names metadata of another authorization
///    server than the one signed in at: a sign-in there (when one may be made, below), then `.retry`.
/// 3. A 401 on the first try: the token is refreshed once, then `.retry`. A token that a refresh for a refusal just
///    gave (within a minute) is not refreshed again: `.retry` with it (another request's refusal already renewed it),
///    so a server refusing by turns makes at most one refresh per token.
/// 4. A 401 after the retry (the refreshed token refused too), or no sign-in at all: a new sign-in (when one may be
///    made), then `.retry`.
/// 5. A 403 `insufficient_scope` naming scopes: a step-up sign-in asking the scopes held and the ones named (when one
///    may be made), then `.retry`; else `.scopesNotGranted(missing:)`.
///
/// **When a sign-in may be made.** Only with `allowsInteractiveSignIn` (else `.noPreviousSignIn`, naming `signin login
/// --resource URL`), and at most once for each reason in the authorizer's life: one sign-in (none stored, the grant
/// ended, the server refused what it issued, another server), one step-up, one registration anew. A server that keeps
/// refusing gets an error that says so instead of browser after browser; one that failed is remembered and thrown again.
/// The person acting again lifts both: a new sign-in in the store (`signin login --resource URL` in a terminal, which
/// a running authorizer picks up at its next request), or the program calling `forgetFailedSignIn()`.
///
/// A refresh the server refuses with `invalid_client` (a server restarted without its registrations) registers a new
/// client at the next sign-in rather than offering the forgotten one again. Several programs (or several `signin mcp`
/// processes) signing in to one API at once make one sign-in: each waits for the store's lock of that API, and finds
/// the sign-in another made meanwhile before opening a browser of its own. A sign-in that leaves the store (`signin
/// logout --resource URL`) is let go: the next request restores whatever the store then holds.
///
/// A challenge never leads to a server that is not https (loopback aside), nor to metadata for another resource.
/// Cancelling the calling task cancels whatever it waits for.
public actor APIAuthorizer {
    /// What an answer means for the request (`AuthorizationDecision`, under its first name).
    public typealias Decision = AuthorizationDecision

    /// The API (its resource identifier: the URL an MCP client connects to).
    public nonisolated let resource: String
    /// Whether a browser sign-in may happen when the API needs one (a step-up, another server, none yet).
    public nonisolated let allowsInteractiveSignIn: Bool
    private let storeDirectory: String
    private let environment: [String: String]?
    private let onEvent: @Sendable (SignInEvent) -> Void
    private let minimumValidity: Duration
    private let options: SignInOptions
    private let scopes: [String]
    /// A company network's CA file and proxy, for an API's own sign-in (a configured one has its own).
    private let network: NetworkSettings
    /// The configuration whose `resources` list the API: its client and grant serve it (nil: the API's own sign-in).
    private let configured: SignInConfiguration?
    /// Whether requests go without a token until the API asks for one (a 401): see `signsInOnlyWhenAsked`.
    public nonisolated let signsInOnlyWhenAsked: Bool
    /// With `signsInOnlyWhenAsked`: true once nothing was found stored for the API and it has not asked (requests go
    /// without a token); false once it asked, or something was stored.
    private var anonymous: Bool?
    private var user: SignInUser?
    private var client: SignInClient?
    private var failedSignIn: SignInError?
    /// The server refused the client held (`invalid_client`): the next sign-in registers anew.
    private var clientForgotten = false
    /// What this authorizer has spent of the sign-ins it may make without the person acting again (see the type).
    private var signInMade = false
    private var stepUpMade = false
    private var registeredAgain = false
    /// The token a refresh for a refusal gave, and when: not refreshed again for a refusal within a minute.
    private var renewedForRefusal: (token: String, at: ContinuousClock.Instant)?
    /// The last bearer headers, while their token is fresh and the store's folder unchanged: `headers(method:url:)`
    /// answers from here on any thread without a hop onto the actor (a lock and a clock read, no system call). The
    /// first of the caches in front of a token (`ResidentCredentials` says which answers when).
    private let fresh = Locked<FreshHeaders?>(nil)
    /// The last request address found on the API's own origin: a bridge asks for the same one at every call, and
    /// the check parses two URLs.
    private let ownOriginSeen = Locked<String?>(nil)

    private struct FreshHeaders {
        let headers: [String: String]
        /// Until when the token is fresh enough (its expiry less `minimumValidity`), by the wall clock.
        let until: Date
        let resident: ResidentCredentials
        let generation: UInt64
    }

    /// An authorizer for the API at `resource`.
    ///
    /// - `storeDirectory`: where sign-ins are kept (default: the `signin` command's store, so `signin login
    ///   --resource URL` signs a program in too, and `signin token/whoami/logout --resource URL` see its sign-in).
    /// - `allowsInteractiveSignIn`: whether a sign-in may open a browser (or run `options`' device flow) when the API
    ///   needs one; false: `.noPreviousSignIn` instead, naming `signin login --resource URL`.
    /// - `options`: how such a sign-in runs (its timeout, the device flow, a port, a login hint, whether a browser
    ///   opens); `scopes`: asked for at the first sign-in besides those the API names (a step-up adds its own).
    /// - `minimumValidity`: a token closer than this to its expiry is refreshed before it is handed out.
    /// - `environment`: the environment to read (`$XDG_DATA_HOME`, `$BROWSER`, ...); nil: the process's.
    /// - `signsInOnlyWhenAsked`: with nothing stored for the API, requests go without a token until the API answers
    ///   401 (a public server, or one keyed with a header of the program's own, is never signed in to); then as usual.
    /// - `network`: a company network's CA file and proxy (a configuration's `ca_file` and `proxy`), for the API's
    ///   metadata, its authorization server and every token request of its sign-in.
    /// - `onEvent`: a sign-in's progress (the address to visit, a device code), for the program to show.
    public init(resource: String, storeDirectory: String? = nil, allowsInteractiveSignIn: Bool = false, options: SignInOptions = SignInOptions(),
                scopes: [String] = [], minimumValidity: Duration = .seconds(60),
                environment: [String: String]? = nil, signsInOnlyWhenAsked: Bool = false, network: NetworkSettings = NetworkSettings(),
                onEvent: @escaping @Sendable (SignInEvent) -> Void = { _ in }) {
        self.init(resource: resource, configured: nil, storeDirectory: storeDirectory, allowsInteractiveSignIn: allowsInteractiveSignIn, options: options,
                  scopes: scopes, minimumValidity: minimumValidity, environment: environment, signsInOnlyWhenAsked: signsInOnlyWhenAsked, network: network,
                  onEvent: onEvent)
    }

    /// An authorizer for the API at `resource` that `configuration` lists in its `resources` (RFC 8707): the person's
    /// own client and grant at the configured provider serve it (as `signin token --resource URL` does), no sign-in of
    /// the API's own; a sign-in, when one may be made, is at the configured provider. Otherwise as the other
    /// initialiser.
    public init(resource: String, configuration: SignInConfiguration, storeDirectory: String? = nil, allowsInteractiveSignIn: Bool = false,
                options: SignInOptions = SignInOptions(), minimumValidity: Duration = .seconds(60),
                environment: [String: String]? = nil, onEvent: @escaping @Sendable (SignInEvent) -> Void = { _ in }) {
        self.init(resource: resource, configured: configuration, storeDirectory: storeDirectory, allowsInteractiveSignIn: allowsInteractiveSignIn,
                  options: options, scopes: [], minimumValidity: minimumValidity, environment: environment, signsInOnlyWhenAsked: false,
                  network: configuration.network, onEvent: onEvent)
    }

    /// What both public initialisers set.
    private init(resource: String, configured: SignInConfiguration?, storeDirectory: String?, allowsInteractiveSignIn: Bool, options: SignInOptions,
                 scopes: [String], minimumValidity: Duration, environment: [String: String]?, signsInOnlyWhenAsked: Bool, network: NetworkSettings,
                 onEvent: @escaping @Sendable (SignInEvent) -> Void) {
        self.resource = resource
        self.network = network
        self.configured = configured
        self.signsInOnlyWhenAsked = signsInOnlyWhenAsked
        self.allowsInteractiveSignIn = allowsInteractiveSignIn
        self.options = options
        self.scopes = scopes
        self.environment = environment
        self.storeDirectory = storeDirectory ?? CredentialStore.defaultDirectory(environment: environment ?? ProcessEnvironment.current)
        self.onEvent = onEvent
        self.minimumValidity = minimumValidity
    }

    /// The headers for one request with `method` to `url`: `Authorization` (`Bearer`, or `DPoP` with a `DPoP` proof).
    /// A sign-in that went from the store since it was restored here (signed out, or replaced by another program's
    /// new sign-in) is not kept: the store is read again, and the sign-in there (or a new one, when allowed) serves.
    /// A bearer token still fresh, with nothing changed in the store's folder since, is answered from memory on the
    /// caller's own executor (no hop onto the actor, no system call); a DPoP-bound grant makes a proof each time.
    ///
    /// A request to another origin than the API's own (scheme, host and port of `resource`) gets no token:
    /// `.unsupported`, naming both, and nothing is read or sent.
    nonisolated(nonsending) public func headers(method: String, url: URL) async throws(SignInError) -> [String: String] {
        let address = url.absoluteString
        if !ownOriginSeen.withLock({ $0 == address }) {
            try TokenRequest.requireOwnOrigin(address, of: resource)
            ownOriginSeen.withLock { $0 = address }
        }
        if let kept = fresh.withLock({ f -> [String: String]? in
            guard let f, f.resident.watchedGeneration == f.generation, Date() < f.until else { return nil }
            return f.headers
        }) { return kept }
        return try await isolatedHeaders(method: method, url: url)
    }

    /// As `headers(method:url:)`, with no sign-in: where one would be needed, `.noPreviousSignIn` (for a request no
    /// person waits on, such as a stream the program keeps open in the background).
    public func headersWithoutSignIn(method: String, url: URL) async throws(SignInError) -> [String: String] {
        do {
            return try await Self.$quiet.withValue(true) { try await headers(method: method, url: url) }
        } catch let error as SignInError {
            throw error
        } catch {
            throw .system(reason: "\(error)")
        }
    }

    /// Set while a request no person waits on asks for headers: no sign-in is made for it.
    @TaskLocal private static var quiet = false

    /// Refuses a request to `url` when it is not on the origin of `resource`: the API's token is for the API alone.
    package static func requireOwnOrigin(_ url: URL, of resource: String) throws(SignInError) {
        try TokenRequest.requireOwnOrigin(url.absoluteString, of: resource)
    }

    private func isolatedHeaders(method: String, url: URL) async throws(SignInError) -> [String: String] {
        if signsInOnlyWhenAsked, user == nil {
            if anonymous == nil {
                anonymous = configured == nil && APIAccess.knownConfiguration(for: resource, storeDirectory: storeDirectory, network: network) == nil
            }
            if anonymous == true { return [:] }
        }
        do throws(SignInError) {
            return try await currentHeaders(method: method, url: url)
        } catch .noPreviousSignIn(let reason) where user != nil {
            if case .agentRefused = reason { throw .noPreviousSignIn(reason: reason) }
            (user, client) = (nil, nil)
            do throws(SignInError) {
                return try await currentHeaders(method: method, url: url)
            } catch .noPreviousSignIn where user != nil && configured != nil && allowsInteractiveSignIn && !Self.quiet {
                // The configured sign-in stands but cannot give this API's token any more (the company IdP's session
                // ended: it refuses the sign-in's ID token): with a person at hand, one new sign-in there, then the
                // token again.
                try await signIn(challenge: nil, addingScopes: [], reason: .sessionEnded)
                return try await currentHeaders(method: method, url: url)
            }
        } catch .accountNotFound where user != nil {
            // The account held left the store (signed out, or another account signed in instead): whatever the store
            // holds now serves.
            (user, client) = (nil, nil)
            return try await currentHeaders(method: method, url: url)
        }
    }

    private func currentHeaders(method: String, url: URL) async throws(SignInError) -> [String: String] {
        let user = try await signedInUser()
        // Read before the token: a change in the folder after this makes what is kept below stale at once.
        let generation = user.client.resident?.watchedGeneration
        let token = try await user.freshToken(resource: resource, audience: nil, minimumValidity: minimumValidity)
        let headers = try user.authorizationHeaders(token: token.value, method: method, url: url)
        if headers["DPoP"] == nil, let generation, let resident = user.client.resident, let expiry = token.expirationDate {
            // A token living less than twice the minimum validity is kept for the first half of what it has left
            // (a 30 s token would otherwise be asked for again on every request).
            let margin = min(minimumValidity.timeInterval, max(0, expiry.timeIntervalSinceNow) / 2)
            fresh.withLock { $0 = FreshHeaders(headers: headers, until: expiry.addingTimeInterval(-margin), resident: resident, generation: generation) }
        } else {
            fresh.withLock { $0 = nil }
        }
        return headers
    }

    /// What the answer `status` with `wwwAuthenticate` (the header's value, if any) means (see the type's steps).
    /// `afterRetry`: this answer is to the request sent again after a `.retry`.
    public func decide(status: Int, wwwAuthenticate: String?, afterRetry: Bool = false) async throws(SignInError) -> Decision {
        guard status == 401 || status == 403 else { return .done }
        // The headers kept are the ones just refused: whatever comes next is asked anew.
        fresh.withLock { $0 = nil }
        let challenge = wwwAuthenticate.flatMap { WWWAuthenticate($0).tokenChallenge }
        if status == 403 {
            guard challenge?.error == "insufficient_scope" else { return .done }
            let needed = challenge?.scopes ?? []
            let held = user?.grantedScopes ?? []
            // Only what the sign-in does not hold is missing (a challenge names every scope the call needs).
            let missing = needed.filter { !held.contains($0) }
            // Another request's step-up already brought them: the request again, with the token that holds them.
            if missing.isEmpty && !afterRetry && stepUpMade { return .retry }
            guard allowsInteractiveSignIn, !stepUpMade else { throw .scopesNotGranted(missing: missing.isEmpty ? needed : missing) }
            // The step-up keeps what was held: a read tool and a write tool by turns need one sign-in, not one each.
            try await signIn(challenge: challenge, addingScopes: held + needed.filter { !held.contains($0) }, reason: .stepUp)
            return .retry
        }
        if let named = challenge?.resourceMetadata, let client, !(try await isSameServer(named, as: client.configuration.issuer)) {
            try await signIn(challenge: challenge, addingScopes: [], reason: .signIn)
            return .retry
        }
        if anonymous == true {
            // The API asks for a token for the first time: a sign-in where its challenge says.
            anonymous = false
            do throws(SignInError) {
                try await signIn(challenge: challenge, addingScopes: scopes, reason: .signIn)
            } catch .providerError(let endpoint, let code, _) where code.hasPrefix("http_") {
                // No RFC 9728 metadata: nothing says where to sign in. Say what the server asked for instead.
                let asked = wwwAuthenticate.map { "`WWW-Authenticate: \($0.withoutControlCharacters.prefix(200))`" } ?? "a token, with no WWW-Authenticate header"
                throw .providerError(endpoint: endpoint, code: code,
                                     detail: "the server answered 401 asking for \(asked), but publishes no protected resource metadata (RFC 9728), so there is nowhere to sign in; if it takes a key or a token of its own, pass it with --header 'Name: ${VARIABLE}'")
            }
            return .retry
        }
        if !afterRetry, let user {
            do throws(SignInError) {
                let refused = try await user.freshToken(resource: resource, audience: nil, minimumValidity: minimumValidity)
                if let renewed = renewedForRefusal, renewed.token == refused.value, ContinuousClock.now - renewed.at < .seconds(60) {
                    // Renewed for a refusal a moment ago (another request's, or the same server by turns): not again.
                    return .retry
                }
                let renewed = try await user.freshToken(resource: resource, audience: nil, minimumValidity: minimumValidity, forceRefresh: true)
                if renewed.value != refused.value {
                    renewedForRefusal = (renewed.value, ContinuousClock.now)
                    return .retry
                }
            } catch .providerError(_, "invalid_client", _) {
                // The server no longer knows the client (restarted without its registrations): register anew.
                clientForgotten = true
            } catch .noPreviousSignIn {
                // The grant ended: a new sign-in, below.
            }
        }
        try await signIn(challenge: challenge, addingScopes: [], reason: .signIn)
        return .retry
    }

    /// The person acted: the next decision may sign in again (after one failed, or after the sign-in, step-up and
    /// registration this authorizer may make by itself were spent).
    public func forgetFailedSignIn() {
        failedSignIn = nil
        (signInMade, stepUpMade, registeredAgain) = (false, false, false)
    }

    /// Why a sign-in is asked for: each reason is spent once (see the type).
    /// Why a sign-in is made: the API asked for one, a step-up, or the configured sign-in's session at its provider
    /// ended (its ID token refused) though its grant stands. The first and the last share one budget.
    private enum SignInReason { case signIn, stepUp, sessionEnded }

    /// The user signed in to the API: restored silently, or, with none, signed in when allowed.
    private func signedInUser() async throws(SignInError) -> SignInUser {
        if let user { return user }
        if let known = configured ?? APIAccess.knownConfiguration(for: resource, storeDirectory: storeDirectory, network: network) {
            let client = SignInClient(configuration: known, storeDirectory: storeDirectory, environment: environment, onEvent: onEvent)
            do throws(SignInError) {
                let restored = try await client.restorePreviousSignIn(minimumValidity: .zero)
                (self.client, self.user) = (client, restored)
                return restored
            } catch .providerError(_, "invalid_client", _) {
                clientForgotten = true
            } catch {}
        }
        try await signIn(challenge: nil, addingScopes: scopes, reason: .signIn)
        return user!
    }

    /// Whether the metadata at `metadataURL` names the server `issuer` (no network when it names it in the store).
    private func isSameServer(_ metadataURL: String, as issuer: String) async throws(SignInError) -> Bool {
        let resource = self.resource
        let challenge = WWWAuthenticate.Challenge(scheme: "Bearer", parameters: ["resource_metadata": metadataURL])
        let servers = try await offPool("reading the API's metadata") { (_) throws(SignInError) -> [String] in
            var probe = SignInConfiguration(clientID: "signin")
            probe.httpTimeout = .seconds(30)
            try HTTPClient.loadLibrary()
            return try ProtectedResourceMetadata.discover(for: resource, challenge: challenge, http: HTTPClient(configuration: probe)).metadata.authorizationServers
        }
        return servers.contains { Issuer.same($0, issuer) }
    }

    /// A browser sign-in for the API (where `challenge` says, with `addingScopes`), when allowed, none failed, and
    /// `reason`'s one sign-in is not spent; a sign-in another process put in the store meanwhile serves instead.
    private func signIn(challenge: WWWAuthenticate.Challenge?, addingScopes: [String], reason: SignInReason) async throws(SignInError) {
        guard allowsInteractiveSignIn, !Self.quiet else {
            throw .noPreviousSignIn(reason: .nothingStored(issuer: "the API \(resource.withoutControlCharacters) (sign in with `signin login --resource \(resource.withoutControlCharacters)`, or allow an interactive sign-in)"))
        }
        let (resource, store, env, onEvent, options, configured, network) = (self.resource, storeDirectory, environment, self.onEvent, self.options, self.configured, self.network)
        let held = user?.accessToken?.value
        // A session that ended is mended only by a new sign-in's ID token (a refresh changes the access token too).
        let heldID = user?.idToken?.value
        let spent = (reason == .stepUp ? stepUpMade : signInMade)
        let (forgotten, failed) = (clientForgotten && !registeredAgain, failedSignIn)
        if clientForgotten && registeredAgain {
            // Registered anew once already, and the server forgot that client too.
            throw .providerError(endpoint: "the authorization server of \(resource.withoutControlCharacters)", code: "invalid_client",
                                 detail: "it forgot the client signin registered again a moment ago; signin does not register a third time in this run: run `signin login --resource \(resource.withoutControlCharacters)` in a terminal")
        }
        let exhausted: SignInError = reason == .stepUp
            ? .scopesNotGranted(missing: addingScopes.filter { !(user?.grantedScopes.contains($0) ?? false) })
            : .providerError(endpoint: "the API (\(resource.withoutControlCharacters))", code: "sign_in_refused",
                             detail: "it refused the sign-in signin made for it in this run; signin does not open the browser again by itself: run `signin login --resource \(resource.withoutControlCharacters)` in a terminal, then call again")
        do throws(SignInError) {
            let (client, user, new) = try await offPool("the sign-in") { (canceller) throws(SignInError) -> (SignInClient, SignInUser, Bool) in
                // One sign-in to the API at a time, across processes: the lock's holder may sign in for all.
                try CredentialStore(directory: store).prepareKey()
                let lock = store + "/api-" + Hex.encode(Array(Crypto.sha256(Array(resource.utf8)).prefix(12))) + ".signin.lock"
                let waiting = { onEvent(.notice("another signin is signing in to \(resource.withoutControlCharacters) (a browser may be open for it); waiting for that sign-in")) }
                return try FileLock.with(lock, waiting: waiting, canceller: canceller) { () throws(SignInError) -> (SignInClient, SignInUser, Bool) in
                    // Another signed in meanwhile (a token other than the one this authorizer held): that sign-in serves,
                    // and counts as the person acting.
                    // (A challenge to an authorizer that held nothing is the server's first 401, not a move: what
                    // another process stored for this API serves as well.)
                    if challenge == nil || held == nil, addingScopes.allSatisfy({ self.scopes.contains($0) }),
                       let known = configured ?? APIAccess.knownConfiguration(for: resource, storeDirectory: store, network: network) {
                        let c = SignInClient(configuration: known, storeDirectory: store, environment: env, onEvent: onEvent)
                        if let u = try? c.restore(minimumValidity: .zero),
                           reason == .sessionEnded ? u.idToken?.value != heldID : u.accessToken?.value != held { return (c, u, false) }
                    }
                    if let failed { throw failed }
                    if spent { throw exhausted }
                    if let configured {
                        // The configured provider's sign-in, for the scopes it asks and any a step-up names.
                        let client = SignInClient(configuration: configured, storeDirectory: store, environment: env, onEvent: onEvent)
                        let added = addingScopes.filter { !configured.scopes.contains($0) }
                        return (client, try client.signInBlocking(additionalScopes: added, options: options, canceller: canceller, emit: onEvent), true)
                    }
                    // The program allows sign-ins: an API that moved to another server is followed, and the move said (a
                    // notice the program shows), with the API's metadata read once.
                    let pinned = (try? CredentialStore(directory: store).apiMetadata(resource: resource))??.authorizationServers.first
                    let configuration = try APIAccess.configuration(for: resource, storeDirectory: store, network: network, challenge: challenge, addingScopes: addingScopes,
                                                                    registeringAgain: forgotten, allowingServerChange: true)
                    if let pinned, !Issuer.same(pinned, configuration.issuer) {
                        onEvent(.notice("\(resource.withoutControlCharacters) now names \(configuration.issuer.withoutControlCharacters) as its authorization server (it named \(pinned.withoutControlCharacters) before); signing in there"))
                    }
                    let client = SignInClient(configuration: configuration, storeDirectory: store, environment: env, onEvent: onEvent)
                    return (client, try client.signInBlocking(additionalScopes: [], options: options, canceller: canceller, emit: onEvent), true)
                }
            }
            if new {
                if reason == .stepUp { stepUpMade = true } else { signInMade = true }
                if forgotten { registeredAgain = true }
            } else {
                // The person signed in elsewhere: what this authorizer may do by itself starts afresh.
                (signInMade, stepUpMade, registeredAgain, failedSignIn) = (false, false, false, nil)
            }
            (self.client, self.user, self.clientForgotten) = (client, user, false)
            renewedForRefusal = nil
        } catch .unsupported(let reason) where options.useDeviceFlow && reason.contains("device_authorization_endpoint") {
            // The way through that this program can take, not a command-line option it has no use for.
            failedSignIn = nil
            throw .unsupported(reason: "The authorization server of \(resource.withoutControlCharacters) offers no device flow (no device_authorization_endpoint): sign in without it, in a browser, or once in a terminal with `signin login --resource \(resource.withoutControlCharacters) --no-browser` (paste the address back), then call again")
        } catch .unsupported(let reason) where options.failsWithoutBrowser && (reason.hasPrefix("No browser") || reason.hasPrefix("This sign-in may not")) {
            // Nowhere to show the page: said, with the way through, and not remembered (the next request looks again,
            // opening no browser where none can open); a sign-in made in a terminal is picked up at the next request.
            let said = SignInError.unsupported(reason: "\(reason). Sign in from a terminal with `signin login --resource \(resource.withoutControlCharacters)`, then call again")
            failedSignIn = nil
            throw said
        } catch {
            // Remembered: the next 401 does not open the browser again (a spent sign-in is said again each time).
            if case .canceled = error {} else if !(spent && error.description == exhausted.description) {
                failedSignIn = error
            }
            throw error
        }
    }
}
