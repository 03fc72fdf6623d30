import Testing
import Foundation
import SignInBase
import SignInProtocol
import SignInStorage
import SignInGrant

/// The token use case's decision tree, branch by branch, with no process and no network: an in-memory store, a
/// token endpoint that answers as it is told and records what it was asked, and a clock that stands still.
@Suite struct TokenUseCaseTests {
    static let issuer = "https://idp.example"
    static let start = Date(timeIntervalSince1970: 1_900_000_000)

    /// A clock that shows `now` until moved.
    final class FixedClock: TokenClock {
        let time = Locked(TokenUseCaseTests.start)
        var now: Date { time.withLock { $0 } }
        func advance(_ seconds: TimeInterval) { time.withLock { $0 = $0.addingTimeInterval(seconds) } }
    }

    /// A token endpoint that answers from `answers` in order and records each request.
    final class ScriptedEndpoint: TokenEndpoint {
        enum Answer: Sendable {
            case tokens(TokenResponse)
            case refused(SignInError, rotated: String? = nil)
        }
        struct Request: Sendable, Equatable {
            var grant: String
            var token: String
            var resource: String?
            var audience: String?
        }
        let script: Locked<[Answer]>
        let asked = Locked<[Request]>([])
        let verified = Locked<[String: VerifiedIDToken]>([:])

        init(_ answers: [Answer] = []) { script = Locked(answers) }

        var requests: [Request] { asked.withLock { $0 } }

        private func next(_ r: Request) throws(SignInError) -> TokenResponse {
            asked.withLock { $0.append(r) }
            let answer: Answer? = script.withLock { $0.isEmpty ? nil : $0.removeFirst() }
            switch answer {
            case .tokens(let t)?: return t
            case .refused(let e, _)?: throw e
            case nil: throw .networkUnavailable(endpoint: "token endpoint", detail: "the test gave no answer")
            }
        }

        func prepare() throws(SignInError) {}

        func refresh(_ refreshToken: String, endpoints: ProviderEndpoints, proofKey: ProofKey?, resource: String?,
                     keepRotated: (String) throws(SignInError) -> Void) throws(SignInError) -> TokenResponse {
            if case .refused(_, let rotated?)? = script.withLock({ $0.first }) { try keepRotated(rotated) }
            return try next(Request(grant: "refresh_token", token: refreshToken, resource: resource))
        }

        func exchange(_ subjectToken: String, endpoints: ProviderEndpoints, proofKey: ProofKey?, audience: String?,
                      resource: String?) throws(SignInError) -> TokenResponse {
            try next(Request(grant: "token-exchange", token: subjectToken, resource: resource, audience: audience))
        }

        func verifyIDToken(_ raw: String, endpoints: ProviderEndpoints) throws(SignInError) -> VerifiedIDToken {
            guard let v = verified.withLock({ $0[raw] }) else { throw .invalidIDToken(reason: "unknown to the test") }
            return v
        }
    }

    /// One family that answers any request naming a service account, and names one when the configuration asks.
    struct ServiceAccountFamily: TokenFamily {
        var configurationSection: (any ConfigurationSection.Type)? { nil }
        var forwardedSettingKeys: [String] { [] }
        func forwardedSettings(_ configuration: SignInConfiguration) -> [String: String] { [:] }
        func configuredChain(_ configuration: SignInConfiguration) -> [String] { configuration.scopes.contains("sa") ? ["robot@sa"] : [] }
        func scopeRules(for request: TokenRequest, configuration: SignInConfiguration) -> ProviderRules? { nil }
        func token(for request: TokenRequest, grant: any PersonGrant) throws(SignInError) -> IssuedToken? {
            guard let sa = request.serviceAccountChain.last else { return nil }
            let t: SignInToken = try grant.derivedCredential(DerivedTokenKey(DerivedTokenKey.Kind("test-sa"), request.serviceAccountChain),
                                                            account: request.account, minimumValidity: request.minimumValidity, buyingWith: .access,
                                                            retryWhen: { _ in false }, bearer: nil) { person throws(SignInError) in
                SignInToken(value: "sa-token-for-\(sa)-bought-with-\(person)", expirationDate: TokenUseCaseTests.start.addingTimeInterval(3600))
            }
            return IssuedToken(token: t, kind: .access, subject: sa, name: sa)
        }
    }

    static var endpoints: ProviderEndpoints {
        ProviderEndpoints(issuer: issuer, authorization: issuer + "/authorize", token: issuer + "/token", jwks: issuer + "/jwks")
    }

    static func entry(_ sub: String = "alice", email: String? = "alice@example.org", refresh: String? = "rt-1", access: String = "at-1",
                      expiresIn: TimeInterval = 3600, scopes: [String] = ["openid", "email"], idToken: String? = nil) -> StoredCredentials {
        StoredCredentials(issuer: issuer, clientID: "client", refreshToken: refresh, accessToken: access, accessTokenExpiry: start.addingTimeInterval(expiresIn),
                          idToken: idToken, idTokenExpiry: idToken == nil ? nil : start.addingTimeInterval(expiresIn),
                          profile: SignInProfile(userID: sub, email: email), grantedScopes: scopes, endpoints: endpoints, savedAt: start)
    }

    struct World {
        var store: InMemoryCredentialStorage
        var endpoint: ScriptedEndpoint
        var clock: FixedClock
        var useCase: TokenUseCase
        /// How many times the use case said it saved a change.
        var changes: Locked<Int>
    }

    static func world(_ entries: [StoredCredentials] = [entry()], answers: [ScriptedEndpoint.Answer] = [], scopes: [String] = ["openid", "email"]) -> World {
        let store = InMemoryCredentialStorage(entries)
        let endpoint = ScriptedEndpoint(answers)
        let clock = FixedClock()
        let changes = Locked(0)
        let config = SignInConfiguration(clientID: "client", scopes: scopes, issuer: issuer)
        let useCase = TokenUseCase(configuration: config, store: store, endpoint: endpoint, clock: clock, families: [ServiceAccountFamily()],
                                   changed: { changes.withLock { $0 += 1 } })
        return World(store: store, endpoint: endpoint, clock: clock, useCase: useCase, changes: changes)
    }

    /// The in-memory store, with what another process does once the lock is taken (`whenLocked`, run once) and a save
    /// that fails while `failingSaves` says so: the two things a test cannot otherwise put between a read and a save.
    final class InterleavedStorage: CredentialStorage {
        let inner: InMemoryCredentialStorage
        let whenLocked = Locked<(@Sendable (InMemoryCredentialStorage) -> Void)?>(nil)
        let failingSaves = Locked(false)

        init(_ inner: InMemoryCredentialStorage) { self.inner = inner }

        func allCredentials(for client: ClientIdentity) -> [StoredCredentials] { inner.allCredentials(for: client) }
        func credentials(for client: ClientIdentity, subject: String) -> StoredCredentials? { inner.credentials(for: client, subject: subject) }
        func currentCredentials(for client: ClientIdentity) -> StoredCredentials? { inner.currentCredentials(for: client) }
        func save(_ credentials: StoredCredentials) throws(SignInError) {
            if failingSaves.withLock({ $0 }) { throw .storeUnwritable(path: "/store/alice.cred", reason: "No space left on device") }
            inner.save(credentials)
        }
        func makeCurrent(subject: String, for client: ClientIdentity) { inner.makeCurrent(subject: subject, for: client) }
        func removeCredentials(for client: ClientIdentity, subject: String) -> Bool { inner.removeCredentials(for: client, subject: subject) }
        func removeCurrentCredentials(for client: ClientIdentity) -> Bool { inner.removeCurrentCredentials(for: client) }
        func withExclusiveAccess<T>(for client: ClientIdentity, subject: String?, _ body: () throws(SignInError) -> T) throws(SignInError) -> T {
            let other = whenLocked.withLock { f -> (@Sendable (InMemoryCredentialStorage) -> Void)? in defer { f = nil }; return f }
            other?(inner)
            return try inner.withExclusiveAccess(for: client, subject: subject, body)
        }
    }

    /// A use case over an `InterleavedStorage` of `entries`, with `families`.
    static func interleaved(_ entries: [StoredCredentials] = [entry()], answers: [ScriptedEndpoint.Answer] = [],
                            families: [any TokenFamily] = [ServiceAccountFamily()]) -> (InterleavedStorage, ScriptedEndpoint, TokenUseCase) {
        let store = InterleavedStorage(InMemoryCredentialStorage(entries))
        let endpoint = ScriptedEndpoint(answers)
        let config = SignInConfiguration(clientID: "client", scopes: ["openid", "email"], issuer: issuer)
        return (store, endpoint, TokenUseCase(configuration: config, store: store, endpoint: endpoint, clock: FixedClock(), families: families))
    }

    /// The `SignInError` `body` throws (nil: none).
    static func error(_ body: () throws -> Void) -> SignInError? {
        do { try body(); return nil } catch let error as SignInError { return error } catch { return nil }
    }

    static var stored: (World) -> StoredCredentials? { { $0.store.credentials(for: ClientIdentity(issuer: issuer, clientID: "client"), subject: "alice") } }

    // MARK: Which account

    @Test func nothingStoredAndNoneCurrentAreTwoReasons() {
        let empty = Self.world([])
        #expect(Self.error { _ = try empty.useCase.token(TokenRequest()) } == .noPreviousSignIn(reason: .nothingStored(issuer: Self.issuer)))
        let w = Self.world()
        _ = w.store.removeCurrentCredentials(for: ClientIdentity(issuer: Self.issuer, clientID: "client"))
        w.store.save(Self.entry("bob", email: "bob@example.org"))
        #expect(Self.error { _ = try w.useCase.token(TokenRequest()) } == .noPreviousSignIn(reason: .noCurrentAccount(stored: ["bob@example.org"])))
        #expect(w.endpoint.requests.isEmpty)
    }

    @Test func anAccountIsNamedByEmailInAnyCaseOrBySubAndNeverGuessed() throws {
        let w = Self.world([Self.entry(), Self.entry("bob", email: "bob@example.org", access: "at-bob")])
        #expect(try w.useCase.token(TokenRequest(account: "BOB@example.org")).token.value == "at-bob")
        #expect(try w.useCase.token(TokenRequest(account: "bob")).token.value == "at-bob")
        guard case .accountNotFound(_, let known)? = Self.error({ _ = try w.useCase.token(TokenRequest(account: "carol")) }) else { Issue.record("carol"); return }
        #expect(known.count == 2)
        w.store.save(Self.entry("carol", email: "bob"))
        guard case .ambiguousAccount? = Self.error({ _ = try w.useCase.token(TokenRequest(account: "bob")) }) else { Issue.record("a sub and an e-mail"); return }
    }

    // MARK: Cached or refreshed

    @Test func aFreshTokenIsAnsweredWithoutTheEndpoint() throws {
        let w = Self.world()
        let issued = try w.useCase.token(TokenRequest())
        #expect(issued.token.value == "at-1" && issued.tokenType == "Bearer" && issued.subject == "alice" && issued.name == "alice@example.org")
        #expect(w.endpoint.requests.isEmpty)
        #expect(try w.useCase.wouldRefresh(TokenRequest()) == false)
    }

    @Test func aTokenInsideTheMinimumValidityIsRefreshedAndTheRotationSaved() throws {
        let w = Self.world([Self.entry(expiresIn: 30)], answers: [.tokens(TokenResponse(accessToken: "at-2", expiresIn: 3600, refreshToken: "rt-2", scope: ["openid"]))])
        #expect(try w.useCase.wouldRefresh(TokenRequest()))
        #expect(try w.useCase.token(TokenRequest()).token.value == "at-2")
        #expect(w.endpoint.requests == [.init(grant: "refresh_token", token: "rt-1")])
        let saved = try #require(Self.stored(w))
        #expect(saved.refreshToken == "rt-2" && saved.accessToken == "at-2" && saved.grantedScopes == ["openid"])
        #expect(saved.accessTokenExpiry == Self.start.addingTimeInterval(3600), "the expiry is the clock's now plus expires_in")
        #expect(w.changes.withLock { $0 } == 1, "the observers are told once")
        // Fresh now: the next call asks nothing.
        #expect(try w.useCase.token(TokenRequest()).token.value == "at-2")
        #expect(w.endpoint.requests.count == 1)
    }

    /// Between the first read and the lock another process may act: its fresh token is taken without a request (the
    /// refresh token read first may be spent already), and an account signed out meanwhile is said as such.
    @Test func whatAnotherProcessDidWhileThisOneWaitedForTheLockCounts() throws {
        let (store, endpoint, useCase) = Self.interleaved([Self.entry(expiresIn: 0)])
        store.whenLocked.withLock { $0 = { inner in inner.save(TokenUseCaseTests.entry(refresh: "rt-2", access: "at-theirs", expiresIn: 3600)) } }
        #expect(try useCase.token(TokenRequest()).token.value == "at-theirs")
        #expect(endpoint.requests.isEmpty, "nothing asked: the other process refreshed")
        // Forced, a token another process refreshed meanwhile is as good as a forced refresh of this one's.
        store.whenLocked.withLock { $0 = { inner in inner.save(TokenUseCaseTests.entry(refresh: "rt-3", access: "at-forced", expiresIn: 3600)) } }
        #expect(try useCase.token(TokenRequest(forceRefresh: true)).token.value == "at-forced")
        #expect(endpoint.requests.isEmpty)
        let (gone, goneEndpoint, goneUseCase) = Self.interleaved([Self.entry(expiresIn: 0)])
        gone.whenLocked.withLock { $0 = { inner in _ = inner.removeCredentials(for: ClientIdentity(issuer: TokenUseCaseTests.issuer, clientID: "client"), subject: "alice") } }
        #expect(Self.error { _ = try goneUseCase.token(TokenRequest()) } == .noPreviousSignIn(reason: .signedOutMeanwhile))
        #expect(goneEndpoint.requests.isEmpty)
    }

    /// A save that fails after the provider rotated the refresh token says the grant is spent (not "nothing changed");
    /// one that fails without a rotation is the store's own error.
    @Test func aRotatedGrantThatCannotBeSavedIsSaidToBeSpent() throws {
        let (store, _, useCase) = Self.interleaved([Self.entry(expiresIn: 0)], answers: [.tokens(TokenResponse(accessToken: "at-2", expiresIn: 3600, refreshToken: "rt-2")),
                                                                                        .tokens(TokenResponse(accessToken: "at-3", expiresIn: 3600))])
        store.failingSaves.withLock { $0 = true }
        #expect(Self.error { _ = try useCase.token(TokenRequest()) } == .rotatedGrantUnsaved(path: "/store/alice.cred", reason: "No space left on device"))
        #expect(Self.error { _ = try useCase.token(TokenRequest()) } == .storeUnwritable(path: "/store/alice.cred", reason: "No space left on device"))
        #expect(store.inner.credentials(for: ClientIdentity(issuer: Self.issuer, clientID: "client"), subject: "alice")?.accessToken == "at-1", "nothing half-saved")
    }

    @Test func aForcedRefreshRefreshesAFreshToken() throws {
        let w = Self.world(answers: [.tokens(TokenResponse(accessToken: "at-2", expiresIn: 3600))])
        #expect(try w.useCase.wouldRefresh(TokenRequest(forceRefresh: true)))
        #expect(try w.useCase.token(TokenRequest(forceRefresh: true)).token.value == "at-2")
        #expect(try #require(Self.stored(w)).refreshToken == "rt-1", "a provider that does not rotate keeps the old one")
    }

    @Test func aShortLivedRefreshedTokenIsFreshForItsFirstHalf() throws {
        let w = Self.world([Self.entry(expiresIn: 0)], answers: [.tokens(TokenResponse(accessToken: "at-30s", expiresIn: 30)),
                                                                .tokens(TokenResponse(accessToken: "at-next", expiresIn: 30))])
        #expect(try w.useCase.token(TokenRequest()).token.value == "at-30s")
        w.clock.advance(14)
        #expect(try w.useCase.token(TokenRequest()).token.value == "at-30s", "16 s of 30 left: fresh for the default minute")
        w.clock.advance(2)
        #expect(try w.useCase.token(TokenRequest()).token.value == "at-next", "under half left: refreshed")
        // A minimum asked on purpose is honoured as asked.
        #expect(try w.useCase.wouldRefresh(TokenRequest(minimumValidity: .seconds(3600))))
    }

    @Test func anEndedGrantIsRefusedWithoutARequest() throws {
        var ended = Self.entry(expiresIn: 0)
        ended.grantEndedAt = Self.start
        let w = Self.world([ended])
        #expect(Self.error { _ = try w.useCase.token(TokenRequest()) } == .noPreviousSignIn(reason: .grantEnded(on: Self.start)))
        #expect(w.endpoint.requests.isEmpty)
    }

    @Test func aRefusedGrantIsRememberedAndNothingDeleted() throws {
        let refused = OAuthError.make(code: "invalid_grant", description: nil, endpoint: "token endpoint")
        let w = Self.world([Self.entry(expiresIn: 0)], answers: [.refused(refused)])
        #expect(Self.error { _ = try w.useCase.token(TokenRequest()) } == .noPreviousSignIn(reason: .grantEnded(on: Self.start)))
        let saved = try #require(Self.stored(w))
        #expect(saved.grantEndedAt == Self.start && saved.refreshToken == "rt-1" && saved.accessToken == "at-1")
        #expect(Self.error { _ = try w.useCase.token(TokenRequest()) } == .noPreviousSignIn(reason: .grantEnded(on: Self.start)))
        #expect(w.endpoint.requests.count == 1, "not asked again")
    }

    @Test func anyOtherFailureChangesNothingButARotatedTokenIsKept() throws {
        let w = Self.world([Self.entry(expiresIn: 0)], answers: [.refused(.networkUnavailable(endpoint: "token endpoint", detail: "down")),
                                                                .refused(.providerError(endpoint: "token endpoint", code: "invalid_response", detail: "bad"), rotated: "rt-2")])
        #expect(Self.error { _ = try w.useCase.token(TokenRequest()) } == .networkUnavailable(endpoint: "token endpoint", detail: "down"))
        #expect(try #require(Self.stored(w)).refreshToken == "rt-1" && Self.stored(w)?.grantEndedAt == nil)
        guard case .providerError? = Self.error({ _ = try w.useCase.token(TokenRequest()) }) else { Issue.record("the refused answer"); return }
        #expect(try #require(Self.stored(w)).refreshToken == "rt-2", "the rotated refresh token is the grant: saved before the refusal")
    }

    @Test func noRefreshTokenCannotRefresh() {
        let w = Self.world([Self.entry(refresh: nil, expiresIn: 0)])
        #expect(Self.error { _ = try w.useCase.token(TokenRequest()) } == .noPreviousSignIn(reason: .noRefreshToken))
    }

    @Test func aRefreshedIDTokenMustNameTheSameAccount() throws {
        let w = Self.world([Self.entry(expiresIn: 0, idToken: "id-1")],
                           answers: [.tokens(TokenResponse(accessToken: "at-2", expiresIn: 3600, refreshToken: "rt-2", idToken: "id-other")),
                                     .tokens(TokenResponse(accessToken: "at-3", expiresIn: 3600, idToken: "id-2"))])
        w.endpoint.verified.withLock {
            $0["id-other"] = VerifiedIDToken(subject: "mallory", profile: SignInProfile(userID: "mallory"), expiry: nil)
            $0["id-2"] = VerifiedIDToken(subject: "alice", profile: SignInProfile(userID: "alice", name: "Alice"), expiry: Self.start.addingTimeInterval(600))
        }
        #expect(Self.error { _ = try w.useCase.token(TokenRequest()) } == .invalidIDToken(reason: "the refreshed ID token is for another account (sub changed)"))
        #expect(try #require(Self.stored(w)).refreshToken == "rt-2", "rotated, so saved before the ID token was checked")
        let id = try w.useCase.token(TokenRequest(kind: .id))
        #expect(id.token.value == "id-2")
        let saved = try #require(Self.stored(w))
        #expect(saved.profile.name == "Alice" && saved.profile.email == "alice@example.org", "the fields the new token lacks are kept")
    }

    @Test func anIDTokenAskedForThatTheRefreshDidNotBringIsAnError() throws {
        let w = Self.world([Self.entry(expiresIn: 0, idToken: "id-1")], answers: [.tokens(TokenResponse(accessToken: "at-2", expiresIn: 3600))])
        #expect(Self.error { _ = try w.useCase.token(TokenRequest(kind: .id)) } == .noPreviousSignIn(reason: .noNewIDToken(storedExpiry: Self.start)))
        #expect(try #require(Self.stored(w)).accessToken == "at-2", "the refreshed tokens are saved first")
    }

    // MARK: What the request may get

    @Test func scopesNotGrantedAndIDTokensForOthersAreRefused() {
        let w = Self.world()
        guard case .unsupported(let reason)? = Self.error({ _ = try w.useCase.token(TokenRequest(scopes: ["drive"])) }) else { Issue.record("scopes"); return }
        #expect(reason.contains("not granted drive"))
        guard case .unsupported(let other)? = Self.error({ _ = try w.useCase.token(TokenRequest(kind: .id, audience: "someone-else")) }) else { Issue.record("audience"); return }
        #expect(other.contains("needs a service account"))
        #expect(w.endpoint.requests.isEmpty)
    }

    @Test func aDPoPProofForTheProvidersOwnEndpointIsNeverGiven() {
        var bound = Self.entry()
        bound.accessTokenType = "DPoP"
        let w = Self.world([bound])
        var request = TokenRequest()
        request.proofFor = .init(method: "POST", url: Self.issuer + "/token")
        guard case .unsupported(let reason)? = Self.error({ _ = try w.useCase.token(request) }) else { Issue.record("own endpoint"); return }
        #expect(reason.contains("never given out"))
    }

    /// A service account no family composed here mints is refused, never answered with the person's own token.
    @Test func aServiceAccountNoFamilyMintsIsRefusedNotAnsweredWithThePersons() {
        let (_, endpoint, useCase) = Self.interleaved(families: [])
        guard case .unsupported(let reason)? = Self.error({ _ = try useCase.token(TokenRequest(serviceAccountChain: ["robot@sa"])) }) else {
            Issue.record("a service account's token was answered without a family"); return
        }
        #expect(reason.contains("robot@sa"))
        #expect(endpoint.requests.isEmpty)
    }

    @Test func aServiceAccountIsTheFamilysAndBoughtOnceWithThePersonsToken() throws {
        let w = Self.world(scopes: ["openid", "email", "sa"])
        #expect(w.useCase.serviceAccountChain(for: .configured) == ["robot@sa"])
        #expect(w.useCase.serviceAccountChain(for: .person) == [])
        var request = TokenRequest()
        request.principal = .configured
        let t = try w.useCase.token(request)
        #expect(t.token.value == "sa-token-for-robot@sa-bought-with-at-1" && t.subject == "robot@sa")
        #expect(try #require(Self.stored(w)).derivedTokens?.count == 1, "kept in the person's entry")
        request.principal = .person
        #expect(try w.useCase.token(request).token.value == "at-1")
    }

    // MARK: Tokens for one API

    @Test func aResourceTokenIsKeptBesideThePersonsAndAskedOnce() throws {
        let w = Self.world(answers: [.tokens(TokenResponse(accessToken: "at-api", expiresIn: 600)),
                                     .tokens(TokenResponse(accessToken: "at-1", expiresIn: 600))])
        var request = TokenRequest()
        request.resource = "https://api.example"
        #expect(try w.useCase.wouldRefresh(request))
        let t = try w.useCase.token(request)
        #expect(t.token.value == "at-api" && t.resource == "https://api.example" && !t.evidentlyUnrestricted)
        #expect(w.endpoint.requests == [.init(grant: "refresh_token", token: "rt-1", resource: "https://api.example")])
        #expect(try w.useCase.token(request).token.value == "at-api")
        #expect(w.endpoint.requests.count == 1)
        #expect(try w.useCase.token(TokenRequest()).token.value == "at-1", "the person's own token is left as it was")
        // A provider that ignores `resource` answers with the grant's own token: said so.
        request.resource = "https://other.example"
        #expect(try w.useCase.token(request).evidentlyUnrestricted)
    }

    /// A request for an API's token with a proof for another origin (a server naming another address, through a
    /// forwarded agent) gets no token and sends nothing; a proof for the API's own origin, on any path, gets it.
    @Test func anAPIsTokenIsNeverGivenForARequestToAnotherOrigin() throws {
        let w = Self.world(answers: [.tokens(TokenResponse(accessToken: "at-api", expiresIn: 600))])
        var request = TokenRequest()
        request.resource = "http://127.0.0.1:8080/sse"
        for elsewhere in ["http://localhost:8080/messages/", "http://127.0.0.1:8081/messages/", "https://127.0.0.1:8080/messages/",
                          "http://127.0.0.1:8080@evil.example/messages/"] {
            request.proofFor = TokenRequest.DPoPTarget(method: "POST", url: elsewhere)
            #expect(throws: SignInError.self, "\(elsewhere)") { try w.useCase.token(request) }
        }
        #expect(w.endpoint.requests.isEmpty, "nothing asked of the provider")
        request.proofFor = TokenRequest.DPoPTarget(method: "POST", url: "http://127.0.0.1:8080/messages/?session_id=1")
        #expect(try w.useCase.token(request).token.value == "at-api")
    }

    /// `hosted_domain` set after a sign-in of another domain (or of none): the stored sign-in is not handed out, the
    /// cached path included, and the message names the account and the domain; a sign-in of the domain is.
    @Test func aStoredSignInOutsideTheHostedDomainIsNotHandedOut() throws {
        var w = Self.world()
        var config = w.useCase.configuration
        config.hostedDomain = "example.org"
        w.useCase = TokenUseCase(configuration: config, store: w.store, endpoint: w.endpoint, clock: w.clock)
        let error = Self.error { _ = try w.useCase.token(TokenRequest()) }
        #expect(error?.description.contains("hosted domain \"example.org\"") == true && error?.description.contains("alice") == true, "\(String(describing: error))")
        #expect(w.endpoint.requests.isEmpty)
        var inDomain = Self.entry()
        inDomain.profile.hostedDomain = "example.org"
        w.store.save(inDomain)
        #expect(try w.useCase.token(TokenRequest()).token.value == "at-1")
    }

    /// A kept token for one API decides whether a request would refresh: not while it is fresh, yes when forced.
    @Test func wouldRefreshReadsTheTokenKeptForTheAPI() throws {
        let w = Self.world(answers: [.tokens(TokenResponse(accessToken: "at-api", expiresIn: 600))])
        var request = TokenRequest()
        request.resource = "https://api.example"
        _ = try w.useCase.token(request)
        #expect(try !w.useCase.wouldRefresh(request))
        request.forceRefresh = true
        #expect(try w.useCase.wouldRefresh(request))
        request = TokenRequest(minimumValidity: .seconds(900))
        request.resource = "https://api.example"
        #expect(try w.useCase.wouldRefresh(request), "600 s kept, 900 asked")
    }

    /// Whether a token for one API is evidently the grant's own reach: the grant's token again, or a JWT whose `aud` (a
    /// string or a list) does not name the API; an opaque token or one without `aud` says nothing, so it is taken.
    @Test func aTokenIsEvidentlyUnrestrictedOnlyWhenItSaysSo() {
        func jwt(_ claims: String) -> String { "e30." + Base64URL.encode(Array(claims.utf8)) + ".sig" }
        let api = "https://api.example"
        #expect(TokenUseCase.evidentlyUnrestricted("at-1", for: api, grantsOwn: "at-1"))
        #expect(!TokenUseCase.evidentlyUnrestricted("opaque", for: api, grantsOwn: "at-1"))
        #expect(!TokenUseCase.evidentlyUnrestricted(jwt(#"{"aud":"https://api.example"}"#), for: api, grantsOwn: nil))
        #expect(TokenUseCase.evidentlyUnrestricted(jwt(#"{"aud":"https://other.example"}"#), for: api, grantsOwn: nil))
        #expect(!TokenUseCase.evidentlyUnrestricted(jwt(#"{"aud":["x","https://api.example"]}"#), for: api, grantsOwn: nil))
        #expect(TokenUseCase.evidentlyUnrestricted(jwt(#"{"aud":["x","y"]}"#), for: api, grantsOwn: nil))
        #expect(!TokenUseCase.evidentlyUnrestricted(jwt(#"{"sub":"alice"}"#), for: api, grantsOwn: nil))
    }

    /// A bound token's proof for an API's request: made with the entry's key, for that method and URL and this token.
    @Test func aDPoPProofIsMadeForTheRequestItNames() throws {
        var bound = Self.entry()
        bound.accessTokenType = "DPoP"
        bound.dpopKey = try ProofKey.generate().stored
        let w = Self.world([bound])
        var request = TokenRequest()
        request.proofFor = .init(method: "get", url: "https://api.example/items?page=2")
        let issued = try w.useCase.token(request)
        #expect(issued.tokenType == "DPoP")
        let proof = try #require(issued.dpopProof)
        let payload = try #require(Base64URL.decode(String(proof.split(separator: ".")[1])))
        let claims = try #require(JSONValue.object(from: Data(payload)))
        #expect(claims["htm"]?.string == "GET" && claims["htu"]?.string == "https://api.example/items")
        #expect(claims["ath"]?.string == Base64URL.encode(Crypto.sha256(Array("at-1".utf8))))
    }

    /// A derived token whose subject token the provider finds expired: the person's token refreshed once and the
    /// exchange asked again; a refusal the rule does not name is the provider's error as it is.
    @Test func anExchangeRefusedForAnExpiredSubjectRefreshesItOnceAndAsksAgain() throws {
        let expired = SignInError.providerError(endpoint: "token endpoint", code: "invalid_token", detail: "expired")
        let w = Self.world(answers: [.refused(expired), .tokens(TokenResponse(accessToken: "at-2", expiresIn: 3600)),
                                     .tokens(TokenResponse(accessToken: "xt", expiresIn: 600))])
        #expect(try w.useCase.token(TokenRequest(audience: "https://api.example")).token.value == "xt")
        #expect(w.endpoint.requests == [.init(grant: "token-exchange", token: "at-1", audience: "https://api.example"),
                                        .init(grant: "refresh_token", token: "rt-1"),
                                        .init(grant: "token-exchange", token: "at-2", audience: "https://api.example")])
        let other = SignInError.providerError(endpoint: "token endpoint", code: "invalid_request", detail: nil)
        let refused = Self.world(answers: [.refused(other)])
        #expect(Self.error { _ = try refused.useCase.token(TokenRequest(audience: "https://api.example")) } == other)
        #expect(refused.endpoint.requests.count == 1, "asked once")
    }

    /// A family that buys with a bearer of its own (Google's federated token) is asked for a new one, not the
    /// person's, when the provider refuses the first.
    @Test func aFamilysOwnBearerIsRenewedWhenRefused() throws {
        struct OwnBearerFamily: TokenFamily {
            let bearers = Locked<[Bool]>([])
            var configurationSection: (any ConfigurationSection.Type)? { nil }
            var forwardedSettingKeys: [String] { [] }
            func forwardedSettings(_ configuration: SignInConfiguration) -> [String: String] { [:] }
            func configuredChain(_ configuration: SignInConfiguration) -> [String] { [] }
            func scopeRules(for request: TokenRequest, configuration: SignInConfiguration) -> ProviderRules? { nil }
            func token(for request: TokenRequest, grant: any PersonGrant) throws(SignInError) -> IssuedToken? {
                guard let sa = request.serviceAccountChain.last else { return nil }
                let tries = Locked(0)
                let t: SignInToken = try grant.derivedCredential(DerivedTokenKey(DerivedTokenKey.Kind("test-own"), [sa]), account: nil, minimumValidity: .seconds(60),
                                                                buyingWith: .access, retryWhen: { $0 == "invalid_token" },
                                                                bearer: { force in bearers.withLock { $0.append(force) }; return force ? "own-2" : "own-1" }) { bearer throws(SignInError) in
                    let n = tries.withLock { $0 += 1; return $0 }
                    if n == 1 { throw .providerError(endpoint: "iam", code: "invalid_token", detail: nil) }
                    return SignInToken(value: "sa-with-\(bearer)", expirationDate: TokenUseCaseTests.start.addingTimeInterval(3600))
                }
                return IssuedToken(token: t, kind: .access, subject: sa, name: sa)
            }
        }
        let family = OwnBearerFamily()
        let (_, endpoint, useCase) = Self.interleaved(families: [family])
        #expect(try useCase.token(TokenRequest(serviceAccountChain: ["robot@sa"])).token.value == "sa-with-own-2")
        #expect(family.bearers.withLock { $0 } == [false, true])
        #expect(endpoint.requests.isEmpty, "the person's grant was not refreshed")
    }

    @Test func anExchangeIsRefusedBeforeAskingAProviderThatListsNone() throws {
        var entry = Self.entry()
        entry.endpoints = ProviderEndpoints(issuer: Self.issuer, authorization: Self.issuer + "/a", token: Self.issuer + "/t", jwks: Self.issuer + "/j",
                                            grantTypesSupported: ["authorization_code", "refresh_token"])
        let w = Self.world([entry])
        guard case .targetRefused? = Self.error({ _ = try w.useCase.token(TokenRequest(audience: "https://api.example")) }) else { Issue.record("exchange"); return }
        #expect(w.endpoint.requests.isEmpty)
    }

    @Test func anExchangedTokenLivesNoLongerThanItsSubject() throws {
        let w = Self.world([Self.entry(expiresIn: 600)], answers: [.tokens(TokenResponse(accessToken: "xt", expiresIn: 7200))])
        let t = try w.useCase.token(TokenRequest(audience: "https://api.example"))
        #expect(t.token.value == "xt" && t.token.expirationDate == Self.start.addingTimeInterval(600))
        #expect(w.endpoint.requests == [.init(grant: "token-exchange", token: "at-1", audience: "https://api.example")])
        #expect(try w.useCase.token(TokenRequest(audience: "https://api.example")).token.value == "xt")
        #expect(w.endpoint.requests.count == 1, "kept until its expiry")
    }
}
