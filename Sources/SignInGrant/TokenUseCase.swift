import SignInBase
import SignInProtocol
import SignInStorage
import FoundationEssentials

/// The token use case: the one path every consumer's token takes (`signin token` and `id-token`, every bridge, the
/// metadata server, the agent for a forwarded session, `SignInClient.token(_:)` and `restore` for a program). It is
/// built from its ports and decides everything in this file:
/// - `store`: the credential store's reader and writer (`CredentialStorage`; `CredentialStore` in a program,
///   `InMemoryCredentialStorage` in a test);
/// - `endpoint`: the provider's token endpoint and keys (`TokenEndpoint`; `ProviderTokenEndpoint` over libcurl);
/// - `clock`: the time freshness is judged by (`TokenClock`);
/// - `families`: the provider families that derive tokens from the person's grant (Google's, AWS's);
/// - `changed`: told after each change it saved (the client's observers and its in-memory copy).
///
/// `token(_:)`'s decision tree, in order:
/// 0. The principal: a service-account chain the request names; `.configured`, the chain a family's configuration
///    section names (Google's `impersonate_service_account`), else the person; `.person`, the person.
/// 1. A service account or a family's parameters: offered to each family in turn; the first that derives the
///    token answers (buying it through this grant, `derivedCredential`, cached in the entry). A service account no
///    family mints: `.unsupported` (a family's parameters alone that none answers go on as the person's request).
/// 2. The person's access token for one API: `audience` exchanges it (RFC 8693, `exchangedToken`); `resource` alone
///    refreshes for that API (RFC 8707, `resourceToken`). Each is kept in the entry under its own key.
/// 3. An ID token for an audience other than this client: `.unsupported`.
/// 4. The person's own token (`restoreEntry`): which account (`credentials(account:)`: named by e-mail or `sub`,
///    else the current one; none: `noAccount()`); a grant the provider ended: refused at once; fresh for the minimum
///    validity (`isFresh`) and no refresh forced: the stored token, no network, no lock; otherwise under the
///    account's lock, read again, and refreshed unless another process just did (`refreshLocked`).
/// 5. Scopes the request names must all be granted; the answer says its type (`DPoP` with a proof the request asks
///    for, never one for the provider's own endpoints; else `Bearer`).
///
/// The files that decide on a cached `signin token` (configuration with `client_id` and `issuer`, the store's key
/// held unlocked in the kernel keyring), as `bench/walks --list` reads them: 36, of which 14 are the mechanism every
/// path stands on (the system layer, the values, the hashes, the C shims) and 22 the path's, in reading order: the
/// command line (`CLI`, `CommandSpec` and `Options`: the command and its declared options; `Token` and
/// `TokenOptions`: which token; `CommandRun`: what the command asks for); the session (`SignInSession`,
/// `ConfigurationFile`, `APICommandConfiguration`: which file, read, and not an API's own sign-in); the configuration
/// (`SignInConfiguration`, `ConfigurationSection`, `GoogleProvider`: the issuer's rules; `KeyStorage`: the key's
/// custody); the store's reader (`CredentialStore+Reading`: folder, current account); `TokenRequest`; this file;
/// `EnterpriseFamily` (not its request); the key and the entry (`StoreKey`, `KernelKeyring`, `StoredCredentials`);
/// `IssuedToken` (the answer's rendering); and the command's answer (`Bridge`).
package struct TokenUseCase: PersonGrant {
    package let configuration: SignInConfiguration
    package let store: any CredentialStorage
    package let endpoint: any TokenEndpoint
    package let clock: any TokenClock
    package let families: [any TokenFamily]
    package let changed: @Sendable () -> Void

    package init(configuration: SignInConfiguration, store: any CredentialStorage, endpoint: any TokenEndpoint,
                 clock: any TokenClock = WallClock(), families: [any TokenFamily] = [], changed: @escaping @Sendable () -> Void = {}) {
        self.configuration = configuration
        self.store = store
        self.endpoint = endpoint
        self.clock = clock
        self.families = families
        self.changed = changed
    }

    var identity: ClientIdentity { configuration.identity }

    // MARK: The tree

    /// A token as `request` asks, with no browser: the decision tree of the type's comment.
    package func token(_ request: TokenRequest) throws(SignInError) -> IssuedToken {
        var request = request
        request.principal = .serviceAccount(chain: serviceAccountChain(for: request.principal))
        if !request.serviceAccountChain.isEmpty || !request.familyParameters.isEmpty || families.contains(where: { $0.serves(request, configuration: configuration) }) {
            for family in families {
                if let derived = try family.token(for: request, grant: self) { return derived }
            }
            // Never the person's own token for a service account's: only a family mints one.
            if let account = request.serviceAccountChain.last {
                throw .unsupported(reason: "no provider family here mints a token for the service account \(account.withoutControlCharacters)")
            }
        }
        if request.kind == .access, request.audience != nil || request.resource != nil {
            return try targetedToken(request)
        }
        if request.kind == .id, let audience = request.audience, audience != configuration.clientID {
            throw .unsupported(reason: "an ID token for audience \(audience) needs a service account (--impersonate-service-account SA, or impersonate_service_account): the signed-in person's ID tokens are for client \(configuration.clientID) only")
        }
        let (entry, _) = try restoreEntry(account: request.account, minimumValidity: request.minimumValidity, forceRefresh: request.forceRefresh, token: request.kind)
        if request.kind == .access, let asked = request.scopes, let missing = scopeRules(for: request).scopesNotGranted(asked, granted: entry.grantedScopes) {
            throw .unsupported(reason: "the sign-in of \(entry.profile.email ?? entry.profile.userID) was not granted \(missing.joined(separator: ", ")); add to the configuration's scopes and sign in again")
        }
        let stored = request.kind == .id ? entry.idToken.map { SignInToken(value: $0, expirationDate: entry.idTokenExpiry) }
                                         : entry.accessToken.map { SignInToken(value: $0, expirationDate: entry.accessTokenExpiry) }
        guard let t = stored else { throw .noPreviousSignIn(reason: .noToken(request.kind)) }
        var issued = IssuedToken(token: t, kind: request.kind, subject: entry.profile.userID, name: entry.profile.email ?? entry.profile.userID)
        if request.kind == .access, entry.accessTokenType == "DPoP" {
            try bind(&issued, proofKey: entry.dpopKey, endpoints: entry.endpoints, proofFor: request.proofFor)
        }
        return issued
    }

    /// The service-account chain `principal` comes to (empty: the person): step 0.
    package func serviceAccountChain(for principal: TokenRequest.Principal) -> [String] {
        switch principal {
        case .configured: return families.lazy.map { $0.configuredChain(self.configuration) }.first { !$0.isEmpty } ?? []
        case .person: return []
        case .serviceAccount(let chain): return chain
        }
    }

    /// Whose scope names a request's scopes are in: a family's for a token for its APIs, else the provider's.
    package func scopeRules(for request: TokenRequest) -> ProviderRules {
        families.lazy.compactMap { $0.scopeRules(for: request, configuration: self.configuration) }.first ?? configuration.providerRules
    }

    /// Whether answering `request` for the person would refresh first. Reads the store only; no network.
    package func wouldRefresh(_ request: TokenRequest) throws(SignInError) -> Bool {
        guard let stored = try credentials(account: request.account) else { return false }
        if request.kind == .access, let key = DerivedTokenKey.target(audience: request.audience, resource: request.resource) {
            guard let t = stored.derivedToken(key) else { return true }
            return request.forceRefresh || !t.isFresh(at: clock.now, margin: request.minimumValidity.timeInterval)
        }
        return request.forceRefresh || !isFresh(stored, minimumValidity: request.minimumValidity, token: request.kind)
    }

    /// A DPoP-bound access token: its type and key, and the proof `proofFor` asks for, never one for the provider's own
    /// endpoints (with a copied refresh token, such a proof buys tokens).
    private func bind(_ issued: inout IssuedToken, proofKey: String?, endpoints: ProviderEndpoints, proofFor: TokenRequest.DPoPTarget?) throws(SignInError) {
        issued.tokenType = "DPoP"
        issued.storedProofKey = proofKey
        guard let target = proofFor else { return }
        if let problem = target.problem { throw .unsupported(reason: "a DPoP proof: \(problem)") }
        if let own = endpoints.ownEndpointName(of: target.url) {
            throw .unsupported(reason: "a DPoP proof for the provider's own \(own) endpoint (\(target.url.withoutControlCharacters)) is never given out: signin makes its requests to the provider itself")
        }
        issued.dpopProof = try issued.dpopProof(method: target.method, url: target.url)
    }

    // MARK: Which account

    /// The entry `account` names (e-mail, case-insensitive, or `sub`), else the current account's.
    package func credentials(account: String?) throws(SignInError) -> StoredCredentials? {
        let entry: StoredCredentials?
        if let account { entry = try resolve(account) } else { entry = try store.currentCredentials(for: identity) }
        // A family's rule the stored sign-in no longer meets (Google's `hosted_domain` set after it): not handed out.
        if let entry {
            for section in configuration.givenSections {
                if let problem = section.storedProfileProblem(entry.profile) { throw .invalidIDToken(reason: problem) }
            }
        }
        return entry
    }

    /// The one stored account `account` names; an error listing what is stored when it names none or several.
    package func resolve(_ account: String) throws(SignInError) -> StoredCredentials {
        let all = try store.allCredentials(for: identity)
        // One account by its `sub` and another by its e-mail is two accounts: ambiguous, never a silent choice.
        let matches = all.filter { $0.profile.userID == account || $0.profile.email?.lowercased() == account.lowercased() }
        guard matches.count == 1 else {
            if matches.isEmpty { throw .accountNotFound(account: account, known: all.map { $0.profile.displayName + " (sub \($0.profile.userID))" }) }
            throw .ambiguousAccount(account: account, matches: matches.map { $0.profile.displayName + " (sub \($0.profile.userID))" })
        }
        return matches[0]
    }

    /// Why there is no account to use: nothing stored, or accounts stored but none current.
    package func noAccount() -> SignInError {
        let others = (try? store.allCredentials(for: identity)) ?? []
        if others.isEmpty { return .noPreviousSignIn(reason: .nothingStored(issuer: configuration.issuer)) }
        return .noPreviousSignIn(reason: .noCurrentAccount(stored: others.map { $0.profile.email ?? $0.profile.userID }))
    }

    // MARK: The person's token

    /// Whether the entry's token of `token` kind is there, not marked rejected, and valid `minimumValidity` more.
    package func isFresh(_ c: StoredCredentials, minimumValidity: Duration, token: TokenKind = .access) -> Bool {
        Self.isFresh(c, minimumValidity: minimumValidity, token: token, now: clock.now)
    }

    /// `isFresh` at `now`.
    package static func isFresh(_ c: StoredCredentials, minimumValidity: Duration, token: TokenKind, now: Date) -> Bool {
        let minimumValidity = minimumValidity.timeInterval
        switch token {
        case .access:
            guard c.accessToken != nil, c.accessTokenRejectedAt == nil else { return false }
            // A token the server gave no lifetime and no refresh token (a GitHub OAuth app's, which lives until it is
            // revoked): fresh until an API rejects it, since nothing could replace it anyway.
            guard let exp = c.accessTokenExpiry else { return c.refreshToken == nil }
            let left = exp.timeIntervalSince(now)
            // A refreshed token that never lives the default minimum (a 30 s token asked for the usual minute) is fresh
            // for its first half: otherwise every call would refresh, and two consumers would each hold a different
            // token. A longer minimum is asked on purpose (`--min-ttl 3600`) and honoured as asked; the token a sign-in
            // got is refreshed once as before (its lifetime is recorded by a refresh only).
            return StoredCredentials.freshForHalfItsLife(left: left, lifetime: c.accessTokenLifetime, margin: minimumValidity) ?? (left >= minimumValidity)
        case .id:
            guard c.idToken != nil, let exp = c.idTokenExpiry else { return false }
            return exp.timeIntervalSince(now) >= minimumValidity
        }
    }

    /// The person's entry with a token of `token` kind fresh for `minimumValidity`, and whether its account is the
    /// current one (step 4 of the tree):
    /// 1. The account: `account` when given, else the current one; nothing stored, or none current: `noAccount()`.
    /// 2. The provider ended the grant (remembered from an earlier refresh): `.noPreviousSignIn` at once, no request.
    /// 3. Fresh and no refresh forced: the stored entry, with no network and no lock.
    /// 4. Otherwise, under this account's lock (other accounts do not wait), read again: another process may have
    ///    refreshed meanwhile (with a rotating provider, the refresh token read first is already spent). Its fresh
    ///    result is used as is; else a refresh (`refreshLocked`). When the ID token was asked for and the refresh
    ///    brought none, that is an error (only a new sign-in gives one), after the refreshed tokens are saved.
    package func restoreEntry(account: String?, minimumValidity: Duration, forceRefresh: Bool, token: TokenKind) throws(SignInError) -> (StoredCredentials, Bool) {
        guard let cached = try credentials(account: account) else { throw noAccount() }
        let isCurrent = account == nil || cached.profile.userID == (try? store.currentCredentials(for: identity))??.profile.userID
        if let ended = cached.grantEndedAt { throw .noPreviousSignIn(reason: .grantEnded(on: ended)) }
        if !forceRefresh && isFresh(cached, minimumValidity: minimumValidity, token: token) { return (cached, isCurrent) }
        let seen = cached.accessToken
        let subject = cached.profile.userID
        return try store.withExclusiveAccess(for: identity, subject: subject) { () throws(SignInError) -> (StoredCredentials, Bool) in
            guard let current = try store.credentials(for: identity, subject: subject) else {
                throw .noPreviousSignIn(reason: .signedOutMeanwhile)
            }
            if let ended = current.grantEndedAt { throw .noPreviousSignIn(reason: .grantEnded(on: ended)) }
            let someoneElseRefreshed = current.accessToken != seen
            if isFresh(current, minimumValidity: minimumValidity, token: token) && (!forceRefresh || someoneElseRefreshed) {
                return (current, isCurrent)
            }
            let next = try refreshLocked(current)
            if token == .id && next.idToken == current.idToken {
                throw .noPreviousSignIn(reason: .noNewIDToken(storedExpiry: next.idTokenExpiry))
            }
            return (next, isCurrent)
        }
    }

    // MARK: The refresh

    /// Refreshes the tokens of `current`; the caller holds the account's lock.
    ///
    /// 1. No refresh token stored: `.noPreviousSignIn` (the provider issued none).
    /// 2. Before the request, what its save needs is secured (`CredentialStore.withSecuredSave`: the key read once and
    ///    kept, room on disk allocated; no room: `.storeUnwritable` and nothing is sent). From sending the request
    ///    until its answer is saved, SIGINT, SIGTERM and SIGHUP are held and a task's cancellation waits (`CriticalSection`).
    /// 3. The provider refuses the grant (`invalid_grant`): that and its date are saved in the entry (nothing is
    ///    deleted), then `.noPreviousSignIn`. Any other failure changes nothing.
    /// 4. A rotated refresh token is saved before anything else can fail, since the old one is already spent: when the
    ///    answer itself is refused (a malformed member beside it), before the refusal is thrown; at once
    ///    when an ID token is to be verified first (that may fail, or need the network for the keys), else with the
    ///    new tokens in the one save of step 6 (nothing can fail between).
    /// 5. A new ID token must verify and name the same account (`sub`); profile fields it lacks are kept.
    /// 6. The new tokens are saved. A save that still fails after the provider rotated is `.rotatedGrantUnsaved`
    ///    (the old refresh token is spent: "previous credentials are intact" would not be true).
    /// With `resource`: the refresh asks for an access token for that resource alone (RFC 8707); it is kept in the
    /// entry's cache under `DerivedTokenKey.resource` and the person's own access token is left as it was.
    package func refreshLocked(_ current: StoredCredentials, resource: String? = nil) throws(SignInError) -> StoredCredentials {
        guard let refreshToken = current.refreshToken else {
            throw .noPreviousSignIn(reason: .noRefreshToken)
        }
        let proofKey = try current.proofKey()
        // The network first: in the static half this hands the run over before anything is reserved on disk.
        try endpoint.prepare()
        // Step 2: the save secured before the request (the store's own files: the key read once and kept, room on
        // disk allocated); another storage saves as it does.
        guard let files = store as? CredentialStore else {
            return try refreshLocked(current, refreshToken, proofKey, resource: resource, save: { (c) throws(SignInError) in try store.save(c) })
        }
        return try files.withSecuredSave(of: current) { (secured) throws(SignInError) -> StoredCredentials in
            try refreshLocked(current, refreshToken, proofKey, resource: resource, save: { (c) throws(SignInError) in try files.save(c, secured) })
        }
    }

    private func refreshLocked(_ current: StoredCredentials, _ refreshToken: String, _ proofKey: ProofKey?, resource: String?,
                               save: (StoredCredentials) throws(SignInError) -> Void) throws(SignInError) -> StoredCredentials {
        // A save that fails once the provider has rotated says so: the old refresh token is spent.
        func saveRotated(_ c: StoredCredentials) throws(SignInError) {
            do throws(SignInError) { try save(c) } catch {
                guard c.refreshToken != current.refreshToken, case .storeUnwritable(let path, let reason) = error else { throw error }
                throw .rotatedGrantUnsaved(path: path, reason: reason)
            }
        }
        return try CriticalSection.run { () throws(SignInError) -> StoredCredentials in
            let response: TokenResponse
            do throws(SignInError) {
                response = try endpoint.refresh(refreshToken, endpoints: current.endpoints, proofKey: proofKey, resource: resource ?? configuration.grantAPI,
                                                keepRotated: { (rotated) throws(SignInError) in
                    // The answer is refused, but the refresh token it rotated to is the grant now: saved first.
                    var kept = current
                    kept.refreshToken = rotated
                    kept.savedAt = clock.now
                    try saveRotated(kept)
                    changed()
                })
            } catch where error.isGrantRefused {
                // Under the lock we sent the newest refresh token, so the refusal is about the grant itself.
                var ended = current
                let now = clock.now
                ended.grantEndedAt = now
                try save(ended)
                changed()
                throw .noPreviousSignIn(reason: .grantEnded(on: now))
            }
            var next = current
            next.refreshToken = response.refreshToken ?? current.refreshToken
            if next.refreshToken != current.refreshToken && response.idToken != nil { try saveRotated(next) }
            if let raw = response.idToken, current.endpoints.issuesIDTokens {
                let verified = try endpoint.verifyIDToken(raw, endpoints: current.endpoints)
                guard verified.subject == current.profile.userID else {
                    throw .invalidIDToken(reason: "the refreshed ID token is for another account (sub changed)")
                }
                var profile = verified.profile
                profile.fillMissing(from: current.profile)
                next.profile = profile
                next.idToken = raw
                next.idTokenExpiry = verified.expiry
            }
            let now = clock.now
            let expiry = response.expiresIn.map { now.addingTimeInterval(TimeInterval($0)) }
            if let resource {
                // A token for one API: beside the person's, with its own expiry (none said: used once, not kept).
                let unrestricted = Self.evidentlyUnrestricted(response.accessToken, for: resource, grantsOwn: current.accessToken)
                next.keep(.resource(resource), value: response.accessToken, expiry: expiry ?? now, unrestricted: unrestricted ? true : nil, now: now)
            } else {
                next.accessToken = response.accessToken
                next.accessTokenType = response.tokenType == "DPoP" ? "DPoP" : nil
                next.accessTokenRejectedAt = nil
                next.accessTokenExpiry = expiry
                next.accessTokenLifetime = response.expiresIn.map(Double.init)
                if let scope = response.scope { next.grantedScopes = scope }
            }
            next.savedAt = now
            try saveRotated(next)
            changed()
            return next
        }
    }

    /// Whether a token asked for `target` alone is evidently not restricted to it: the grant's own access token
    /// again, or a JWT whose `aud` (a string or a list) does not name `target`. An opaque token says nothing, so it is
    /// taken as asked (nothing can be told without the provider).
    package static func evidentlyUnrestricted(_ token: String, for target: String, grantsOwn: String?) -> Bool {
        if token == grantsOwn { return true }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let payload = Base64URL.decode(String(parts[1])), let claims = JSONValue.object(from: Data(payload)) else { return false }
        switch claims["aud"] {
        case .string(let aud)?: return aud != target
        case .array(let auds)?: return !auds.contains { $0.string == target }
        default: return false
        }
    }

    // MARK: Tokens for one API

    /// The person's access token for one API: exchanged for `audience` (RFC 8693), or for `resource` alone (RFC 8707).
    private func targetedToken(_ request: TokenRequest) throws(SignInError) -> IssuedToken {
        let validity = request.minimumValidity
        // A proof (and so a request) for another origin than the API's own gets no token for that API: a server naming
        // another address (an HTTP+SSE endpoint event, say) never draws it out, here or through a forwarded agent.
        if let target = request.proofFor, let resource = request.resource, resource.hasPrefix("http") {
            try TokenRequest.requireOwnOrigin(target.url, of: resource)
        }
        let t: SignInToken, stored: StoredCredentials
        var unrestricted = false
        if request.audience != nil {
            (t, stored) = try exchangedToken(audience: request.audience, resource: request.resource, account: request.account, minimumValidity: validity, forceRefresh: request.forceRefresh)
        } else {
            let kept = try resourceToken(request.resource!, account: request.account, minimumValidity: validity, forceRefresh: request.forceRefresh)
            (t, stored, unrestricted) = (kept.token, kept.stored, kept.unrestricted)
        }
        var issued = IssuedToken(token: t, kind: .access, subject: stored.profile.userID, name: stored.profile.email ?? stored.profile.userID)
        issued.evidentlyUnrestricted = unrestricted
        issued.resource = request.resource
        issued.audience = request.audience
        if stored.accessTokenType == "DPoP" { try bind(&issued, proofKey: stored.dpopKey, endpoints: stored.endpoints, proofFor: request.proofFor) }
        return issued
    }

    /// An access token for `resource` alone (RFC 8707).
    ///
    /// 1. No entry for the account: not signed in; a grant the provider ended: `.noPreviousSignIn`, no request.
    /// 2. A token for `resource` kept in the entry and valid for `minimumValidity` more (and no refresh forced): it,
    ///    with no network and no lock.
    /// 3. Otherwise, under the account's lock, read again (another process may have got one meanwhile); else a
    ///    refresh with `resource=` (`refreshLocked`), whose token is kept under the resource's key; the person's own
    ///    access token is left as it was.
    /// 4. A resource the provider will not serve (`invalid_target`): `.targetRefused`, nothing stored.
    /// The answer says too whether the token is evidently not restricted to `resource`.
    package func resourceToken(_ resource: String, account: String?, minimumValidity: Duration, forceRefresh: Bool) throws(SignInError) -> ResourceTokenKept {
        let key = DerivedTokenKey.resource(resource)
        let margin = minimumValidity.timeInterval
        let now = clock.now
        func keptEntry(_ c: StoredCredentials, fresh: Bool = true) -> StoredCredentials.DerivedToken? {
            guard let t = c.derivedToken(key), !fresh || t.isFresh(at: now, margin: margin) else { return nil }
            return t
        }
        func kept(_ c: StoredCredentials, fresh: Bool = true) -> SignInToken? {
            keptEntry(c, fresh: fresh).map { SignInToken(value: $0.value, expirationDate: $0.expiry) }
        }
        func answer(_ t: SignInToken, _ c: StoredCredentials) -> ResourceTokenKept {
            ResourceTokenKept(token: t, stored: c, unrestricted: keptEntry(c, fresh: false)?.unrestricted == true)
        }
        guard let stored = try credentials(account: account) else { throw noAccount() }
        if let ended = stored.grantEndedAt { throw .noPreviousSignIn(reason: .grantEnded(on: ended)) }
        if !forceRefresh, let hit = kept(stored) { return answer(hit, stored) }
        let subject = stored.profile.userID
        let seen = kept(stored, fresh: false)?.value
        return try store.withExclusiveAccess(for: identity, subject: subject) { () throws(SignInError) -> ResourceTokenKept in
            guard let current = try store.credentials(for: identity, subject: subject) else { throw .noPreviousSignIn(reason: .signedOutMeanwhile) }
            if let ended = current.grantEndedAt { throw .noPreviousSignIn(reason: .grantEnded(on: ended)) }
            if let hit = kept(current), !forceRefresh || hit.value != seen { return answer(hit, current) }
            let next = try refreshLocked(current, resource: resource)
            guard let t = kept(next, fresh: false) else { throw .noPreviousSignIn(reason: .noToken(.access)) }
            return answer(t, next)
        }
    }

    /// A token for one API as `resourceToken` answers it.
    package struct ResourceTokenKept {
        package var token: SignInToken
        package var stored: StoredCredentials
        package var unrestricted: Bool
    }

    /// The person's access token exchanged at the provider's token endpoint for a token meant for `audience` (and
    /// `resource`) (RFC 8693).
    ///
    /// 1. A provider whose discovery document lists its grant types without token exchange: `.targetRefused`,
    ///    before any request.
    /// 2. A token for this audience and resource kept in the entry, valid for `minimumValidity` more: it, with no
    ///    network.
    /// 3. Otherwise the person's access token (refreshed when needed) is exchanged once under the account's lock,
    ///    with the client's authentication and, for a bound grant, a DPoP proof; a subject token the provider finds
    ///    expired or refused refreshes it once and asks again. The token is kept until its expiry, which is never
    ///    later than the subject token's.
    /// 4. A refused audience (`invalid_target`): `.targetRefused`, nothing stored.
    package func exchangedToken(audience: String?, resource: String?, account: String?, minimumValidity: Duration, forceRefresh: Bool) throws(SignInError) -> (SignInToken, StoredCredentials) {
        guard let stored = try credentials(account: account) else { throw noAccount() }
        let target = audience ?? resource ?? ""
        if let offered = stored.endpoints.grantTypesSupported, !offered.contains(TokenExchange.grantType) {
            throw .targetRefused(endpoint: "the provider (\(stored.issuer))", target: target,
                                 detail: "its discovery document lists the grant types it supports, and token exchange (RFC 8693) is not one of them")
        }
        let validity = forceRefresh ? Duration.seconds(TokenRequest.maximumValidity * 2) : minimumValidity
        let token: SignInToken = try derivedCredential(.exchange(audience: audience, resource: resource), account: account, minimumValidity: validity,
                                                       buyingWith: .access, retryWhen: { $0 == "invalid_token" || $0 == "invalid_grant" }) { subject throws(SignInError) in
            // The subject token was restored (refreshed when needed) just before this call, so the entry holds its
            // expiry: read here, a token kept from before costs no restore.
            let subjectExpiry = try credentials(account: account)?.accessTokenExpiry
            let r = try endpoint.exchange(subject, endpoints: stored.endpoints, proofKey: try stored.proofKey(), audience: audience, resource: resource)
            var expiry = r.expiresIn.map { clock.now.addingTimeInterval(TimeInterval($0)) } ?? subjectExpiry
            if let bound = subjectExpiry, let e = expiry, bound < e { expiry = bound }
            return SignInToken(value: r.accessToken, expirationDate: expiry)
        }
        return (token, stored)
    }

    // MARK: Derived credentials

    /// `PersonGrant.familyRecord`: a record of the encrypted store's (none for another storage).
    package func familyRecord(kind: String, name: String) -> [String: JSONValue]? {
        guard let records = store as? CredentialStore else { return nil }
        return (try? records.record(kind: kind, name: name)) ?? nil
    }

    /// `PersonGrant.keepFamilyRecord`: kept in the encrypted store (nothing for another storage).
    package func keepFamilyRecord(_ json: String, kind: String, name: String) throws(SignInError) {
        try (store as? CredentialStore)?.saveRecord(json, kind: kind, name: name)
    }

    /// `PersonGrant.derivedCredential`: the rule is written there.
    package func derivedCredential<Credential: DerivedCredential>(
        _ key: DerivedTokenKey, account: String?, minimumValidity: Duration, buyingWith kind: TokenKind,
        retryWhen: (String) -> Bool, bearer: ((Bool) throws(SignInError) -> String)? = nil,
        mint: (String) throws(SignInError) -> Credential) throws(SignInError) -> Credential {
        let margin = minimumValidity.timeInterval
        func cached(_ c: StoredCredentials) -> Credential? {
            guard let t = c.derivedToken(key), t.isFresh(at: clock.now, margin: margin) else { return nil }
            return Credential(cachedValue: t.value, expiry: t.expiry)
        }
        guard let stored = try credentials(account: account) else { throw noAccount() }
        if stored.grantEndedAt == nil, let hit = cached(stored) { return hit }
        let (person, _) = try restoreEntry(account: account, minimumValidity: .seconds(60), forceRefresh: false, token: kind)
        let subject = person.profile.userID
        func personToken(_ c: StoredCredentials) -> String { (kind == .id ? c.idToken : c.accessToken) ?? "" }
        return try store.withExclusiveAccess(for: identity, subject: subject) { () throws(SignInError) -> Credential in
            guard let current = try store.credentials(for: identity, subject: subject) else { throw .noPreviousSignIn(reason: .signedOutMeanwhile) }
            if let hit = cached(current) { return hit }
            func other(_ force: Bool) throws(SignInError) -> String? {
                guard let bearer else { return nil }
                return try bearer(force)
            }
            let fresh = try other(false) ?? (kind == .id ? current.idToken : current.accessToken) ?? personToken(person)
            let minted: Credential
            do throws(SignInError) {
                minted = try mint(fresh)
            } catch .providerError(let endpoint, let code, let detail) {
                guard retryWhen(code) else { throw .providerError(endpoint: endpoint, code: code, detail: detail) }
                if let renewed = try other(true) {
                    minted = try mint(renewed)
                } else {
                    minted = try mint(personToken(try restoreEntry(account: subject, minimumValidity: .seconds(60), forceRefresh: true, token: kind).0))
                }
            }
            guard let expiry = minted.cachedExpiry else { return minted }
            var next = try store.credentials(for: identity, subject: subject) ?? current
            next.keep(key, value: minted.cachedValue, expiry: expiry, now: clock.now)
            try store.save(next)
            changed()
            return minted
        }
    }
}
