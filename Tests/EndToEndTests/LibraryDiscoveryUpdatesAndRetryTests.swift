import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import SignInKit  // the public API only, as an adopting program sees it
import SignInKitURLSession
import Testing

/// The library's second trial: what an adopting program had to work around, each through the public API only.
@Suite struct LibraryDiscoveryUpdatesAndRetryTests {
    func client(_ box: Sandbox, _ provider: Provider, env: [String: String] = [:], scopes: [String] = ["openid", "email", "profile"]) -> SignInClient {
        var c = SignInConfiguration(clientID: box.clientID, scopes: scopes, issuer: provider.issuer)
        c.httpTimeout = .seconds(20)
        return SignInClient(configuration: c, storeDirectory: box.storeDir, environment: box.environment.merging(env) { $1 })
    }

    /// Whether something listens on the loopback port.
    static func listening(_ port: Int) -> Bool {
        (try? Subprocess.run("/usr/bin/curl", ["-s", "-o", "/dev/null", "--max-time", "5", "http://127.0.0.1:\(port)/"]).status) == 0
    }

    /// The next element of `iterator`, or nil after `seconds` (a bound on a wait for another process, not a clock).
    static func next<T: Sendable>(_ iterator: inout AsyncStream<T>.Iterator, within seconds: Double = 20) async -> T? {
        nonisolated(unsafe) var it = iterator
        let result = await withTaskGroup(of: T?.self) { group -> T? in
            group.addTask { await it.next() }
            group.addTask {
                await watchdog(seconds: seconds)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        iterator = it
        return result
    }

    // 1. Cancelling reaches signInWithEvents, whichever way the consumer goes away.
    @Test(arguments: ["the events' task", "the value's task", "cancel()"])
    func cancellingTheConsumerCancelsTheSignIn(_ how: String) async throws {
        let strict = try Shared.strict.get()
        let box = try Sandbox(issuer: strict.issuer)
        let client = client(box, strict)
        let (events, signIn) = client.signInWithEvents(options: SignInOptions(openBrowser: false, timeout: .seconds(120)))
        let opened = Waiter()
        let port = SharedValue<Int?>(nil)
        let iterating = Task {
            for await event in events {
                if case .authorizationURL(_, _, let p, _) = event {
                    port.set(p)
                    opened.signal()
                }
            }
        }
        let awaiting = Task { () async -> SignInError? in
            do throws(SignInError) { _ = try await signIn.value; return nil } catch { return error }
        }
        await opened.wait()
        let listener = try #require(port.get())
        #expect(Self.listening(listener))
        switch how {
        case "the events' task": iterating.cancel()
        case "the value's task": awaiting.cancel()
        default: signIn.cancel()
        }
        let error = await awaiting.value
        guard case .canceled(let reason)? = error else { Issue.record("\(how): \(String(describing: error))"); return }
        #expect(reason.contains("the sign-in was canceled"), "\(reason)")
        #expect(!Self.listening(listener), "the listener closed")
        _ = await iterating.value
    }

    // 2. Discovery: async, cancellable, once per process; the user carries its endpoints; claims are JSON values.
    @Test func discoveryIsCancellableAndFetchedOncePerProcess() async throws {
        let silent = try SilentServer()
        // An issuer no earlier test of this process used: discovery is cached per process by issuer, and over a long
        // run the system gives a port again that a stopped provider had.
        let issuer = silent.url + "/silent-" + UUID().uuidString.prefix(8)
        let hanging = SignInClient(configuration: SignInConfiguration(clientID: "c", issuer: issuer), storage: InMemoryCredentialStorage(), environment: [:])
        // The discovery and the watching run on an executor of their own (CancellationTests'), not the cooperative
        // pool: the other suites' synchronous tests hold the pool's two threads for minutes of a loaded run, and on
        // the pool this task once waited past three minutes for its turn before it could connect.
        let executor = OwnThreadExecutor()
        let (connected, error) = await Task(executorPreference: executor) { () async -> (Bool, SignInError?) in
            let task = Task(executorPreference: executor) { () async -> SignInError? in
                do throws(SignInError) { _ = try await hanging.discoverEndpoints(); return nil } catch { return error }
            }
            let connected = await eventually(seconds: 60) { silent.hasPendingConnection }
            task.cancel()
            return (connected, await task.value)
        }.value
        #expect(connected, "the discovery reached the server")
        guard case .canceled(let reason)? = error else { Issue.record("not canceled: \(String(describing: error))"); return }
        #expect(reason.contains("the discovery was canceled"), "\(reason)")

        let own = try Provider(script: "strict_provider.py")
        let config = SignInConfiguration(clientID: "discovery-once", issuer: own.issuer)
        let first = try await SignInClient(configuration: config, storage: InMemoryCredentialStorage(), environment: [:]).discoverEndpoints()
        own.stop()  // the provider is gone: a second client of the same issuer still has the document
        let second = try await SignInClient(configuration: config, storage: InMemoryCredentialStorage(), environment: [:]).discoverEndpoints()
        #expect(first == second && second.tokenEndpoint.absoluteString == own.issuer + "/token")
    }

    @Test func aUserCarriesItsEndpointsAndItsClaimsAsJSONValues() async throws {
        let strict = try Shared.strict.get()
        let box = try Sandbox(issuer: strict.issuer)
        let user = try await client(box, strict).signIn()
        #expect(user.endpoints.userinfoEndpoint?.absoluteString == strict.issuer + "/userinfo")
        let claims = try await user.userInfo()
        #expect(claims["email"]?.string == "alice@example.org")
        #expect(claims["email_verified"]?.bool == true)
        #expect(claims["address"]?.object?["country"]?.string == "NL")
        #expect(claims["updated_at"]?.number == 1_700_000_000)
        // A new client restores and asks userinfo without any discovery (the stored endpoints).
        let restored = try await client(box, strict).restorePreviousSignIn()
        #expect(try await restored.userInfo()["sub"]?.string == "alice")
    }

    /// `APIAuthorizer.perform` (SignInKitURLSession) for an API signed in to from its address: the request reaches the
    /// API with the API's own token; when the server has revoked it, the 401 `invalid_token` gets one refresh of the
    /// API's grant and the request once more, which the API accepts.
    @Test func anAPIAuthorizerSendsTheAPIsTokenAndRefreshesARevokedOneOnce() async throws {
        let strict = try Shared.strict.get()
        let box = try strict.sandbox()
        box.environment["SIGNIN_CONFIG"] = ""
        let api = strict.issuer + "/api/authorizer-perform"
        #expect(try box.signin("login", "--resource", api).status == 0)
        let status = try box.signin("status", "--resource", api, "--json")
        let clientID = try #require((try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])?["client_id"] as? String)
        let authorizer = APIAuthorizer(resource: api, storeDirectory: box.storeDir, environment: box.environment)
        let (body, ok) = try await authorizer.perform(URLRequest(url: URL(string: api)!))
        #expect(ok.statusCode == 200, "\(String(decoding: body, as: UTF8.self))")
        #expect((try JSONSerialization.jsonObject(with: body) as? [String: Any])?["api"] as? String == "/api/authorizer-perform")
        // The server revokes the API's token early: refreshed once, sent once more, accepted.
        let old = try box.signin("token", "--resource", api).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        _ = try strict.http("POST", "/revoke", body: Data("client_id=\(clientID)&token=\(old)".utf8))
        let before = try strict.stats(clientID)["refreshes"] as? Int ?? 0
        let (_, again) = try await authorizer.perform(URLRequest(url: URL(string: api)!))
        #expect(again.statusCode == 200)
        #expect(try strict.stats(clientID)["refreshes"] as? Int == before + 1, "one refresh")
        let now = try box.signin("token", "--resource", api).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(!now.isEmpty && now != old, "the refreshed token is the stored one")
        // A request to another origin (the same server under another name) gets no token and is not sent.
        let elsewhere = api.replacingOccurrences(of: "127.0.0.1", with: "localhost")
        await #expect(throws: SignInError.self) { try await authorizer.perform(URLRequest(url: URL(string: elsewhere)!)) }
        await #expect(throws: SignInError.self) { try await authorizer.headers(method: "GET", url: URL(string: elsewhere)!) }
    }

    // 3. An authorized request, retried once on a refused token; many at once share one refresh.
    @Test func performRetriesOnceOnARefusedTokenAndParallelCallersShareOneRefresh() async throws {
        let strict = try Shared.strict.get()
        let box = try Sandbox(issuer: strict.issuer)
        let client = client(box, strict)
        let user = try await client.signIn()
        let url = URL(string: strict.issuer + "/userinfo")!
        let (_, ok) = try await user.perform(URLRequest(url: url))
        #expect(ok.statusCode == 200)
        // The provider revokes the access token early: the API answers 401 invalid_token.
        let old = try #require(user.accessToken?.value)
        _ = try strict.http("POST", "/revoke", body: Data("client_id=\(box.clientID)&token=\(old)".utf8))
        let before = try strict.stats(box.clientID)["refreshes"] as? Int ?? 0
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<8 { group.addTask { try await user.perform(URLRequest(url: url)).1.statusCode } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(statuses == Array(repeating: 200, count: 8))
        #expect(try strict.stats(box.clientID)["refreshes"] as? Int == before + 1, "one refresh for eight refused requests")
        // A token marked rejected shows so in the account list, not as an expiry in 1970.
        let current = try #require(try client.accounts().first)
        try current.markAccessTokenRejected(try #require(current.accessToken?.value))
        let listed = try #require(try client.accounts().first)
        #expect(listed.accessTokenRejected && listed.accessToken?.expirationDate.map { $0 > Date() } == true)
        let status = try box.signin("accounts")
        #expect(status.stdout.contains("token rejected by an API"), "\(status.stdout)")
        let fresh = try await listed.freshToken()
        #expect(fresh.value != listed.accessToken?.value)
        #expect(try client.accounts().first?.accessTokenRejected == false)
    }

    // 4. The current user's updates: a refresh, the grant ended, and another process signing in and out.
    @Test func currentUserUpdatesSayRefreshesEndedGrantsAndOtherProcesses() async throws {
        let strict = try Shared.strict.get()
        let box = try Sandbox(issuer: strict.issuer)
        let client = client(box, strict)
        let signedIn = try await client.signIn()
        var updates = client.currentUserUpdates().makeAsyncIterator()
        #expect(await Self.next(&updates)??.userID == "alice")
        let refreshed = try await client.restorePreviousSignIn(forceRefresh: true)
        let afterRefresh = await Self.next(&updates)
        #expect(afterRefresh??.accessToken?.value == refreshed.accessToken?.value && refreshed.accessToken != signedIn.accessToken, "the refresh was said")
        // Another process (the signin command, on the same store) signs bob in, then out.
        #expect(try box.signin(["login"], env: ["STANDIN_SUB": "bob"]).status == 0)
        #expect(await Self.next(&updates)??.userID == "bob", "another process's sign-in was said")
        #expect(try box.signin("logout", "--yes").status == 0)
        let signedOut = await Self.next(&updates)
        #expect(signedOut != nil && signedOut! == nil, "another process's sign-out was said")
        // The provider ends alice's grant: the user comes again, with grantEndedAt set.
        #expect(try box.signin("use", "alice@example.org").status == 0)
        #expect(await Self.next(&updates)??.userID == "alice")
        try strict.control(box.clientID, ["token_fault": "invalid_grant", "token_fault_once": true])
        do {
            _ = try await client.restorePreviousSignIn(forceRefresh: true)
            Issue.record("refreshed a refused grant")
        } catch {}
        let ended = await Self.next(&updates)
        #expect(ended??.grantEndedAt != nil, "the ended grant was said")
    }

    // 5. Stand-ins: everything a program calls is on the protocols, with defaults.
    static func everything<C: SignInClientProtocol>(_ client: C) async throws(SignInError) -> [String] {
        var said: [String] = []
        let (events, signIn) = client.signInWithEvents(hint: nil, additionalScopes: [], options: SignInOptions(timeout: .seconds(60)))
        for await _ in events {}
        let user = try await signIn.value
        said.append(user.userID)
        said.append(try client.accounts().map(\.userID).joined(separator: ","))
        said.append(try client.switchAccount(to: user.userID).userID)
        var updates = client.currentUserUpdates().makeAsyncIterator()
        said.append(await updates.next()??.userID ?? "none")
        let token = try await user.freshToken()
        try client.markAccessTokenRejected(token.value, account: nil)
        try user.markAccessTokenRejected(token.value)
        _ = try await client.restorePreviousSignIn(forceRefresh: true)
        said.append(user.grantEndedAt == nil ? "grant" : "ended")
        _ = try client.signOut(account: user.userID)
        return said
    }

    struct MinimalUser: SignInUserProtocol {
        var profile = SignInProfile(userID: "42", name: "Stand In")
        var grantedScopes = ["openid"]
        func freshToken(minimumValidity: Duration) async throws(SignInError) -> SignInToken { SignInToken(value: "fake", expirationDate: nil) }
        func userInfo() async throws(SignInError) -> [String: JSONValue] { ["sub": .string("42")] }
    }

    final class MinimalClient: SignInClientProtocol, @unchecked Sendable {
        var signedIn = false
        var hasPreviousSignIn: Bool { signedIn }
        var currentUser: MinimalUser? { signedIn ? MinimalUser() : nil }
        func restorePreviousSignIn(account: String?, minimumValidity: Duration, forceRefresh: Bool, token: TokenKind) async throws(SignInError) -> MinimalUser {
            guard signedIn else { throw .noPreviousSignIn(reason: .nothingStored(issuer: "stand-in")) }
            return MinimalUser()
        }
        func signIn(hint: String?, additionalScopes: [String], options: SignInOptions) async throws(SignInError) -> MinimalUser {
            signedIn = true
            return MinimalUser()
        }
        func signOut() throws(SignInError) -> Bool { defer { signedIn = false }; return signedIn }
        func disconnect(account: String?) async throws(SignInError) { signedIn = false }
    }

    @Test func aStandInWithTheCoreOnlyRunsTheSameCodeAsTheRealClient() async throws {
        let fake = MinimalClient()
        #expect(try await Self.everything(fake) == ["42", "42", "42", "42", "grant"])
        #expect(!fake.signedIn)
        let strict = try Shared.strict.get()
        let box = try Sandbox(issuer: strict.issuer)
        #expect(try await Self.everything(client(box, strict)) == ["alice", "alice", "alice", "alice", "grant"])
    }

    // 6. The smaller items.
    @Test func optionsBrowserRuleAppNameAndMessages() async throws {
        let o = SignInOptions(openBrowser: false, timeout: .seconds(5), loginHint: "alice@example.org")
        #expect(!o.openBrowser && o.timeout == .seconds(5) && o.loginHint == "alice@example.org" && !o.useDeviceFlow)
        #expect(!SignInOptions.browserLikely(environment: [:]))
        #expect(SignInOptions.browserLikely(environment: ["DISPLAY": ":0"]))
        #expect(!SignInOptions.browserLikely(environment: ["DISPLAY": ":0", "SSH_CONNECTION": "1 2 3 4"]))
        #expect(SignInOptions.browserLikely(environment: ["BROWSER": "firefox", "SSH_CONNECTION": "1 2 3 4"]))

        let strict = try Shared.strict.get()
        let box = try Sandbox(issuer: strict.issuer)
        // No display and no $BROWSER: the library says no browser will open, and runs none.
        var headless = box.environment
        headless["BROWSER"] = nil
        headless["DISPLAY"] = nil
        var config = SignInConfiguration(clientID: box.clientID, issuer: strict.issuer)
        config.appName = "my-app"  // given once: the client keeps its store under the program's name
        let noBrowser = SignInClient(configuration: config, environment: headless)
        let (events, signIn) = noBrowser.signInWithEvents(options: SignInOptions(timeout: .seconds(60)))
        var launch: BrowserLaunch??
        for await event in events {
            if case .authorizationURL(_, _, _, let browser) = event {
                launch = browser
                signIn.cancel()
            }
        }
        guard case .unavailable(let why)?? = launch else { Issue.record("\(String(describing: launch))"); return }
        #expect(why.contains("no browser is likely to open here"))
        do throws(SignInError) { _ = try await signIn.value } catch {
            #expect(error.description.hasPrefix("The sign-in was canceled while waiting for the browser"), "\(error)")
        }
        let inOwnStore = SignInClient(configuration: config, environment: box.environment)
        _ = try await inOwnStore.signIn()
        #expect(FileManager.default.fileExists(atPath: box.environment["XDG_DATA_HOME"]! + "/my-app"))
        #expect(!FileManager.default.fileExists(atPath: box.environment["XDG_DATA_HOME"]! + "/signin"))

        // A cancelled refresh and a cancelled revocation say what was cancelled.
        let user = try await inOwnStore.restorePreviousSignIn()
        // A refresh once sent finishes before the cancel is reported (fifth review, item 10): here the provider's
        // refusal after 2 s.
        try strict.control(box.clientID, ["token_fault": "slow", "slow_seconds": 2, "token_fault_once": true])
        let before = try strict.stats(box.clientID)["token_requests"] as? Int ?? 0
        let refresh = Task { () async -> SignInError? in
            do throws(SignInError) { _ = try await inOwnStore.restorePreviousSignIn(forceRefresh: true); return nil } catch { return error }
        }
        #expect(await eventually { ((try? strict.stats(box.clientID)["token_requests"] as? Int) ?? 0) > before })
        refresh.cancel()
        let refreshError = await refresh.value
        #expect(refreshError?.description.contains("The refresh was canceled after its request was sent; it ran to its end") == true, "\(String(describing: refreshError))")
        try strict.control(box.clientID, ["revoke_fault": "slow", "slow_seconds": 30, "revoke_fault_once": true])
        let revocations = try strict.stats(box.clientID)["revocations"] as? Int ?? 0
        let revoke = Task { () async -> SignInError? in
            do throws(SignInError) { try await inOwnStore.disconnect(); return nil } catch { return error }
        }
        #expect(await eventually { ((try? strict.stats(box.clientID)["revocations"] as? Int) ?? 0) > revocations })
        revoke.cancel()
        #expect((await revoke.value)?.description.contains("The revocation was canceled") == true)
        #expect(inOwnStore.currentUser?.userID == user.userID, "a cancelled revocation signs no one out")
    }

    @Test func addScopesSaysWhichScopesWereNotGrantedAndTheWrongAccountByName() async throws {
        let strict = try Shared.strict.get()
        let box = try Sandbox(issuer: strict.issuer)
        let client = client(box, strict)
        let user = try await client.signIn()
        try strict.control(box.clientID, ["granted_scope": "openid email profile"])
        do {
            _ = try await user.addScopes(["https://example.org/calendar"])
            Issue.record("fewer scopes than asked were taken as success")
        } catch {
            guard case .scopesNotGranted(let missing) = error else { Issue.record("\(error)"); return }
            #expect(missing == ["https://example.org/calendar"])
        }
        try strict.control(box.clientID, ["granted_scope": NSNull()])
        let asBob = try #require(self.client(box, strict, env: ["STANDIN_SUB": "bob"]).currentUser)
        do {
            _ = try await asBob.addScopes(["https://example.org/drive"])
            Issue.record("another account was accepted")
        } catch {
            guard case .mismatchWithCurrentUser(let expected, let actual) = error else { Issue.record("\(error)"); return }
            #expect(expected == "Alice Example <alice@example.org>" && actual.contains("bob@example.org"), "\(expected) \(actual)")
        }
    }
}

/// A value shared between a test and its tasks.
final class SharedValue<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: T
    init(_ v: T) { value = v }
    func get() -> T { lock.withLock { value } }
    func set(_ v: T) { lock.withLock { value = v } }
}
