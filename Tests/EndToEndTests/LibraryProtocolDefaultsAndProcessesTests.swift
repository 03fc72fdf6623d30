import Foundation
import SignInKit  // the public API only, as an adopting program sees it
import Testing

/// What the third adopter tripped on, through the public API only.
@Suite struct LibraryProtocolDefaultsAndProcessesTests {
    func client(_ box: Sandbox, _ provider: Provider) -> SignInClient {
        var c = SignInConfiguration(clientID: box.clientID, issuer: provider.issuer)
        c.httpTimeout = .seconds(20)
        return SignInClient(configuration: c, storeDirectory: box.storeDir, environment: box.environment)
    }

    /// AWS and Google federation are async and cancellable, and on the protocol: a task cancelled while
    /// STS (here a server that never answers) has the request is `.canceled`, not a timeout a minute later; the
    /// same call through the real STS stand-in answers credentials; a stand-in for the client answers them too.
    @Test func awsAndFederationAreAsyncCancellableAndOnTheProtocol() async throws {
        let (box, sts) = try AWSTests.setUp()
        defer { sts.stop() }
        let strict = try Shared.strict.get()
        var config = SignInConfiguration(clientID: box.clientID, issuer: strict.issuer)
        config.awsSTSEndpointOverride = sts.issuer
        let real = SignInClient(configuration: config, storeDirectory: box.storeDir, environment: box.environment)
        let credentials = try await roleCredentials(real)
        #expect(credentials.accessKeyID.hasPrefix("ASIA") || !credentials.accessKeyID.isEmpty)

        let silent = try SilentServer()
        for call in ["aws", "federation"] {
            var c = SignInConfiguration(clientID: box.clientID, issuer: strict.issuer)
            c.httpTimeout = .seconds(120)
            c.awsSTSEndpointOverride = silent.url
            let client = SignInClient(configuration: c, storeDirectory: box.storeDir, environment: box.environment)
            let federation = WorkloadIdentityFederation(audience: "//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/p/providers/q", stsEndpoint: silent.url + "/v1/token")
            let task = Task { () async throws -> Void in
                if call == "aws" {
                    _ = try await client.awsRoleCredentials(AWSRoleRequest(roleARN: AWSTests.role, forceRefresh: true))
                } else {
                    _ = try await client.federatedGoogleAccessToken(federation, forceRefresh: true)
                }
            }
            // The request is on its way: a connection waits at the server.
            #expect(await eventually { silent.hasPendingConnection }, "\(call): the request reached the server")
            task.cancel()
            do {
                try await task.value
                Issue.record("\(call): an answer from a server that never answers")
            } catch let e as SignInError {
                guard case .canceled = e else { Issue.record("\(call): \(e)"); continue }
            }
        }
        let stand = StandInClient()
        #expect(try await roleCredentials(stand).accessKeyID == "AKIASTANDIN")
    }

    /// Generic code over the protocol, as library.md shows it.
    func roleCredentials(_ client: some SignInClientProtocol) async throws(SignInError) -> AWSCredentials {
        try await client.awsRoleCredentials(AWSRoleRequest(roleARN: AWSTests.role))
    }

    struct StandInClient: SignInClientProtocol {
        struct User: SignInUserProtocol {
            var profile: SignInProfile { SignInProfile(userID: "u") }
            var grantedScopes: [String] { [] }
            func freshToken(minimumValidity: Duration) async throws(SignInError) -> SignInToken { SignInToken(value: "t", expirationDate: nil) }
            func userInfo() async throws(SignInError) -> [String: JSONValue] { [:] }
        }
        var hasPreviousSignIn: Bool { true }
        var currentUser: User? { User() }
        func restorePreviousSignIn(account: String?, minimumValidity: Duration, forceRefresh: Bool, token: TokenKind) async throws(SignInError) -> User { User() }
        func signIn(hint: String?, additionalScopes: [String], options: SignInOptions) async throws(SignInError) -> User { User() }
        func signOut() throws(SignInError) -> Bool { true }
        func disconnect(account: String?) async throws(SignInError) {}
        func awsRoleCredentials(_ request: AWSRoleRequest) async throws(SignInError) -> AWSCredentials {
            AWSCredentials(accessKeyID: "AKIASTANDIN", secretAccessKey: "s", sessionToken: "t", expiration: Date().addingTimeInterval(3600))
        }
    }

    /// a long-running program asking for its token before every request pays no thread and no system call
    /// while nothing changed: the system calls of 20 and of 2,000 cached `freshToken()` calls (the worker fixture,
    /// under strace) are the same in number, and no thread is started for them.
    /// The same holds for a token for one API (`freshToken(resource:)`, the call an API client
    /// makes before each request), after its first call read the store.
    @Test(arguments: [false, true])
    func aCachedFreshTokenStartsNoThreadAndOpensNoFile(forAnAPI: Bool) throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/strace") else { Issue.record("not run, so failed: needs strace"); return }
        let strict = try Shared.strict.get()
        let box = try strict.signedInSandbox(extra: forAnAPI ? ["resources": [TokensForEveryAPITests.orders]] : [:])
        func traced(_ calls: Int) throws -> [String: Int] {
            let log = box.root.appendingPathComponent("strace.\(calls)").path
            // Under AddressSanitizer (CI's pass) the worker is instrumented too: LeakSanitizer cannot run under ptrace.
            let env = box.environment.merging(["WORKER_CLIENT_ID": box.clientID, "WORKER_ISSUER": strict.issuer, "WORKER_STORE": box.storeDir,
                                               "WORKER_CACHED_CALLS": "\(calls)", "ASAN_OPTIONS": "detect_leaks=0",
                                               "WORKER_RESOURCE": forAnAPI ? TokensForEveryAPITests.orders : ""]) { $1 }
            let r = try Subprocess.run("/usr/bin/strace", ["-f", "-qq", "-c", "-o", log, Paths.built("signin-test-worker")], env: env.filter { !$0.value.isEmpty })
            #expect(r.status == 0 && r.stdout.hasPrefix("cached \(calls) "), "\(r.stdout) \(r.stderr)")
            var counts: [String: Int] = [:]
            for line in (try String(contentsOfFile: log, encoding: .utf8)).split(separator: "\n") {
                let f = line.split(separator: " ", omittingEmptySubsequences: true)
                // "% time  seconds  usecs/call  calls  [errors]  syscall"
                if f.count >= 5, let n = Int(f[3]), let name = f.last, !name.hasPrefix("-"), name != "total" { counts[String(name)] = n }
            }
            return counts
        }
        let few = try traced(20), many = try traced(2000)
        // Not one per call (the old code started 1,980 here); the runtime's own pool may add a thread under load.
        let threads = ["clone", "clone3"].map { (many[$0] ?? 0) - (few[$0] ?? 0) }.reduce(0, +)
        #expect(threads < 5, "threads started for 1,980 more cached calls: \(threads)")
        let total = many.values.reduce(0, +) - few.values.reduce(0, +)
        #expect(total < 40, "system calls for 1,980 more cached calls: \(total) (\(many.filter { few[$0.key] != $0.value }))")
    }

    /// what a long-running program keeps in memory follows the store: a refresh by another process is seen
    /// (a new token, without a refresh of its own), so is a sign-out by another process, and its own sign-out at once.
    @Test func aKeptTokenFollowsOtherProcessesAndItsOwnSignOut() async throws {
        let strict = try Shared.strict.get()
        let box = try strict.signedInSandbox()
        let c = client(box, strict)
        let user = try await c.restorePreviousSignIn()
        let first = try await user.freshToken().value
        #expect(try await user.freshToken().value == first)
        #expect(try box.signin("token", "--force-refresh").status == 0)
        let refreshes = try strict.stats(box.clientID)["refreshes"] as? Int
        // Polls the condition, as `eventually` does: the watcher's thread tells the client a moment after the save.
        var seen = first
        let deadline = Date().addingTimeInterval(20)
        while seen == first && Date() < deadline {
            seen = try await user.freshToken().value
            if seen == first { try await Task.sleep(for: .milliseconds(5)) }
        }
        // Once more after the deadline: a sleep may end long after it on a loaded run (the cooperative pool's turn).
        if seen == first { seen = try await user.freshToken().value }
        #expect(seen != first, "the token another process refreshed is the one handed out")
        #expect(try strict.stats(box.clientID)["refreshes"] as? Int == refreshes, "and no refresh of its own")
        // Its own sign-out: at once.
        _ = try c.signOut()
        do {
            _ = try await user.freshToken()
            Issue.record("a token after this client signed out")
        } catch {
            guard case .noPreviousSignIn = error else { Issue.record("\(error)"); return }
        }
    }

    /// a user signed out by another process is `.noPreviousSignIn(.signedOutMeanwhile)` from `freshToken()`,
    /// the answer docs/library.md lists, not `.accountNotFound`.
    @Test func aSignOutByAnotherProcessIsSignedOutMeanwhile() async throws {
        let strict = try Shared.strict.get()
        let box = try strict.signedInSandbox()
        let user = try await client(box, strict).restorePreviousSignIn()
        #expect(try box.signin("logout").status == 0)
        do {
            _ = try await user.freshToken(minimumValidity: .seconds(7200))
            Issue.record("a token for a user signed out elsewhere")
        } catch {
            guard case .noPreviousSignIn(.signedOutMeanwhile) = error else { Issue.record("\(error)"); return }
        }
    }

    /// a DPoP-bound user's single header value is refused with a pointer to the two headers it needs;
    /// `authorizationHeaders(method:url:)` gives them.
    @Test func aDPoPBoundUsersHeaderValueIsRefusedAndTheTwoHeadersAreGiven() async throws {
        let p = try DPoPTests.offered.get()
        let box = try p.signedInSandbox()
        let user = try await client(box, p).restorePreviousSignIn()
        #expect(user.accessTokenType == "DPoP")
        do {
            _ = try await user.authorizationHeaderValue()
            Issue.record("a bearer header for a DPoP-bound token")
        } catch {
            guard case .unsupported(let reason) = error else { Issue.record("\(error)"); return }
            #expect(reason.contains("authorizationHeaders(method:url:)"))
        }
        let headers = try await user.authorizationHeaders(method: "GET", url: URL(string: p.issuer + "/userinfo")!)
        #expect(headers["Authorization"]?.hasPrefix("DPoP ") == true && headers["DPoP"] != nil, "\(headers.keys)")
    }

    /// generic code over the protocols compiles as the page writes it (this test compiling is the check;
    /// running it shows the defaults answer).
    @Test func genericCodeUsesTheDefaults() async throws {
        struct User: SignInUserProtocol {
            var profile = SignInProfile(userID: "42", name: "Stand In")
            var grantedScopes = ["openid"]
            func freshToken(minimumValidity: Duration) async throws(SignInError) -> SignInToken { SignInToken(value: "t", expirationDate: nil) }
            func userInfo() async throws(SignInError) -> [String: JSONValue] { [:] }
        }
        func refreshed<U: SignInUserProtocol>(_ u: U) async throws(SignInError) -> U { try await u.refreshTokensIfNeeded() }
        func issuer<C: SignInClientProtocol>(_ c: C) -> String { c.configuration.issuer }
        let u = try await refreshed(User())
        #expect(u.userID == "42" && u.accessTokenType == "Bearer")
        #expect(try await u.authorizationHeaderValue() == "Bearer t")
        let strict = try Shared.strict.get()
        let box = try strict.sandbox()
        #expect(issuer(client(box, strict)) == strict.issuer)
    }

    /// a configuration made in code can name its program (`appName`), whose store is its own.
    @Test func aConfigurationMadeInCodeKeepsItsOwnStore() async throws {
        let strict = try Shared.strict.get()
        let box = try strict.sandbox()
        let mine = SignInClient(configuration: SignInConfiguration(clientID: box.clientID, issuer: strict.issuer, appName: "my-worker"), environment: box.environment)
        _ = try await mine.signIn()
        #expect(FileManager.default.fileExists(atPath: box.environment["XDG_DATA_HOME"]! + "/my-worker"))
        #expect(!FileManager.default.fileExists(atPath: box.environment["XDG_DATA_HOME"]! + "/signin"), "the signin command's store is untouched")
    }
}

