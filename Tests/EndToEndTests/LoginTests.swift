import Foundation
import Testing

/// `signin login` end to end: the real binary, a real provider on loopback, a browser stand-in.
@Suite struct LoginTests {
    @Test func signsInAgainstOidcProviderMockAndStoresNothingInClear() throws {
        let mock = try Shared.mock.get()
        let box = try Sandbox(issuer: mock.issuer, secret: "any-secret")
        let login = try box.signin("login")
        #expect(login.status == 0, "\(login.stderr)")
        #expect(login.stdout == "Signed in as Alice Example <alice@example.org>\n")
        #expect(login.stderr.contains("If the browser did not open, visit:"))
        // The browser ended on the success page, reached by a redirect (no code left in the address bar).
        let final = try #require(box.finalStandinStep())
        #expect((final["url"] as? String)?.contains("code=") == false)
        #expect((final["page"] as? String)?.contains("You are signed in") == true)
        #expect((final["page"] as? String)?.contains("Alice Example") == true)

        let token = try box.signin("token")
        #expect(token.status == 0)
        let accessToken = token.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(accessToken.count > 10)
        // The store holds no token, e-mail or name in clear; files 0600, folder 0700.
        let snapshot = box.storeSnapshot()
        #expect(Set(snapshot.keys.map { $0.split(separator: ".").last.map(String.init) ?? $0 }) == ["key", "cred", "current"], "\(snapshot.keys)")
        for (name, bytes) in snapshot {
            #expect(!bytes.contains(accessToken), "\(name)")
            #expect(!bytes.contains("alice@example.org"), "\(name)")
            let mode = try FileManager.default.attributesOfItem(atPath: box.storeDir + "/" + name)[.posixPermissions] as? Int
            #expect(mode == 0o600, "\(name)")
        }
        let dirMode = try FileManager.default.attributesOfItem(atPath: box.storeDir)[.posixPermissions] as? Int
        #expect(dirMode == 0o700)
    }

    @Test func deniedInTheBrowserExits4AndStoresNothing() throws {
        let mock = try Shared.mock.get()
        let box = try Sandbox(issuer: mock.issuer, secret: "s")
        let r = try box.signin("login", env: ["STANDIN_MODE": "deny"])
        #expect(r.status == 4, "\(r.stderr)")
        #expect(r.stderr.contains("denied"))
        #expect(box.entryFile() == nil)
    }

    @Test func strictProviderWithPKCEAndExactRedirect() throws {
        let strict = try Shared.strict.get()
        let box = try Sandbox(issuer: strict.issuer)
        let r = try box.signin("login", "--json")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains(#""email":"alice@example.org""#))
        let stats = try strict.stats(box.clientID)
        #expect(stats["code_exchanges"] as? Int == 1)
    }

    @Test func forgedAndJunkRequestsDoNotStopTheRealCallback() throws {
        let strict = try Shared.strict.get()
        let box = try Sandbox(issuer: strict.issuer)
        let r = try box.signin("login", env: ["STANDIN_MODE": "junk,forge,allow"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("state does not match"))
        let forge = try #require(box.standinSteps().first { $0["step"] as? String == "forge" })
        #expect(forge["status"] as? Int == 400)
        #expect((forge["page"] as? String)?.contains("refused") == true)
        // The forged code was never sent to the provider: one exchange, the real one.
        #expect(try strict.stats(box.clientID)["code_exchanges"] as? Int == 1)
    }

    @Test(arguments: ["400", "500", "garbage", "drop"])
    func tokenEndpointFailureExits5AndStoresNothing(fault: String) throws {
        let strict = try Shared.strict.get()
        let box = try strict.sandbox(["token_fault": fault])
        let r = try box.signin("login")
        #expect(r.status == 5, "\(r.stderr)")
        #expect(r.stderr.contains("token endpoint (\(strict.issuer)/token)"))
        #expect(box.entryFile() == nil)
        let final = try #require(box.finalStandinStep())
        #expect((final["page"] as? String)?.contains("Sign-in not completed") == true)
    }

    @Test func providerIgnoringPKCEStillGetsTheVerifier() throws {
        // PKCE downgrade: a provider that does not check the challenge must not make the client skip the verifier.
        let strict = try Shared.strict.get()
        let box = try strict.sandbox(["ignore_pkce": true])
        #expect(try box.signin("login").status == 0)
        #expect(try strict.stats(box.clientID)["verifier_matched"] as? Bool == true)
    }

    @Test func idTokenProblemsAreRefused() throws {
        let strict = try Shared.strict.get()
        let cases: [([String: Any], String)] = [
            (["id_token_claims": ["aud": "someone-else"]], "another client"),
            (["id_token_claims": ["nonce": "replayed-nonce"]], "nonce"),
            (["id_token_claims": ["iss": "https://evil.example"]], "issued by"),
            (["id_token_bad_key": true], "signature"),
            (["clock_offset": 3600], "future"),
        ]
        for (settings, message) in cases {
            let box = try strict.sandbox(settings)
            let r = try box.signin("login")
            #expect(r.status == 5, "\(settings): \(r.stderr)")
            #expect(r.stderr.contains(message), "\(settings): \(r.stderr)")
            #expect(box.entryFile() == nil)
        }
    }

    @Test func es256IDTokensAreAccepted() throws {
        let strict = try Shared.strict.get()
        let box = try strict.sandbox(["id_token_alg": "ES256"])
        #expect(try box.signin("login").status == 0)
    }

    @Test func mixUpIssuerInCallbackIsRefused() throws {
        let strict = try Shared.strict.get()
        let box = try strict.sandbox(["iss_override": "https://attacker.example"])
        let r = try box.signin("login")
        #expect(r.status == 5, "\(r.stderr)")
        #expect(r.stderr.contains("mix-up"))
        #expect(try strict.stats(box.clientID)["code_exchanges"] as? Int == 0)
    }

    @Test func timesOutWith6WhenNobodySignsIn() throws {
        let strict = try Shared.strict.get()
        let box = try Sandbox(issuer: strict.issuer)
        let r = try box.signin("login", "--timeout", "1", env: ["STANDIN_MODE": "none"])
        #expect(r.status == 6, "\(r.stderr)")
        #expect(r.stderr.contains("Timed out"))
    }

    @Test func configErrorsNameFileAndFieldAndExit2() throws {
        let strict = try Shared.strict.get()
        let box = try Sandbox(issuer: strict.issuer)
        try box.writeConfig(["client_id": "x", "issuer": strict.issuer, "client_sercet": "typo"])
        var r = try box.signin("login")
        #expect(r.status == 2)
        #expect(r.stderr.contains(box.configPath) && r.stderr.contains("\"client_sercet\""))
        try "{not json".write(toFile: box.configPath, atomically: true, encoding: .utf8)
        r = try box.signin("whoami")
        #expect(r.status == 2)
        #expect(r.stderr.contains(box.configPath))
        r = try box.signin("whoami", "--config", box.root.appendingPathComponent("missing.json").path)
        #expect(r.status == 2 && r.stderr.contains("missing.json") && r.stderr.contains("not found"))
    }

    @Test func helpAndVersionDocumentExitCodes() throws {
        let strict = try Shared.strict.get()
        let box = try Sandbox(issuer: strict.issuer)
        let help = try box.signin("--help")
        #expect(help.status == 0)
        for line in ["3  not signed in", "6  timed out", "login", "token", "logout"] { #expect(help.stdout.contains(line)) }
        #expect(try box.signin("token", "--help").stdout.contains("--min-ttl"))
        #expect(try box.signin("--version").stdout.hasPrefix("signin "))
        #expect(try box.signin("frobnicate").status == 2)
        #expect(try box.signin("token", "--min-ttl", "soon").status == 2)
    }
}
