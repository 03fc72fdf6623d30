import Foundation
import Testing

/// What a new user and an adopter tripped on in the third walk (issue 31), each against the real binary.
@Suite struct ThirdWalkTests {
    // 7: kubelogin #1083/#1459: clusters whose authenticator takes the access token.
    @Test func kubectlCredentialHandsOutTheAccessTokenWhenAsked() throws {
        let strict = try Shared.strict.get()
        let box = try strict.signedInSandbox()
        let access = try box.signin("token").stdout.trimmingCharacters(in: .newlines)
        let info = #"{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","spec":{"interactive":false}}"#
        let r = try box.signin(["kubectl-credential", "--token", "access"], env: ["KUBERNETES_EXEC_INFO": info])
        let obj = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any], "\(r.stderr)")
        #expect((obj["status"] as? [String: Any])?["token"] as? String == access)
        #expect(try box.signin("kubectl-credential", "--token", "refresh").status == 2)
    }

    // 7: a provider that registers only http://localhost (Cognito): redirect_host "localhost"; the listener still
    // binds loopback only.
    @Test func aProviderThatRegistersOnlyLocalhostSignsIn() throws {
        let strict = try Shared.strict.get()
        let refused = try strict.sandbox(["only_localhost": true])
        // The provider refuses the redirect to 127.0.0.1 (the browser stays on its error page): no code comes.
        #expect(try refused.signin("login", "--timeout", "3").status == 6, "127.0.0.1 is not registered there")
        let box = try strict.sandbox(["only_localhost": true], extra: ["redirect_host": "localhost"])
        let r = try box.signin("login")
        #expect(r.status == 0, "\(r.stderr)")
        let bad = try strict.sandbox(extra: ["redirect_host": "0.0.0.0"])
        let badLogin = try bad.signin("login")
        #expect(badLogin.status == 2 && badLogin.stderr.contains("redirect_host"), "\(badLogin.stderr)")
    }

    // 7: OpenID Core 11: offline_access goes with prompt=consent, which certified providers require.
    @Test func offlineAccessAsksForConsent() throws {
        let strict = try Shared.strict.get()
        let box = try strict.sandbox(["offline_needs_consent": true], extra: ["scopes": ["openid", "email", "profile", "offline_access"]])
        let r = try box.signin("login")
        #expect(r.status == 0, "\(r.stderr)")
        // A prompt the configuration chose is kept as it is.
        let chosen = try strict.sandbox(["offline_needs_consent": true], extra: ["scopes": ["openid", "offline_access"], "extra_authorization_parameters": ["prompt": "login"]])
        #expect(try chosen.signin("login", "--timeout", "3").status == 6, "the configuration's own prompt was replaced")
    }

    // 3: on the remote side of `signin ssh`, whoami, status, accounts and login say what the agent offers and
    // where signing in happens, never "write one with `signin init`".
    @Test func theRemoteSideSaysWhatTheAgentOffers() throws {
        let strict = try Shared.strict.get()
        let box = try SSHAgentTests.laptop(strict)
        let who = try box.signin("whoami").stdout.trimmingCharacters(in: .newlines)
        let remote = try RemoteMachine(box)
        let script = """
            signin whoami; echo "w=$?"
            signin status; echo "s=$?"
            signin accounts; echo "a=$?"
            signin login; echo "l=$?"
            signin logout; echo "o=$?"
            """
        let r = try box.signin(["ssh", "--for", "1h"] + remote.sshArguments + [script])
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == who && lines.contains("w=0"), "\(r.stdout) \(r.stderr)")
        #expect(r.stdout.contains("Through the agent forwarded with `signin ssh`") && r.stdout.contains("Accounts: alice@example.org") && lines.contains("s=0"), "\(r.stdout)")
        #expect(lines.contains("* alice@example.org  (forwarded)") && lines.contains("a=0"), "\(r.stdout)")
        #expect(lines.contains("l=2") && lines.contains("o=2"), "\(r.stdout)")
        #expect(r.stderr.contains("Signing in and out happens on the machine the session came from"), "\(r.stderr)")
        #expect(!r.stdout.contains("signin init") && !r.stderr.contains("signin init"), "\(r.stderr)")
        #expect(remote.homeFiles().isEmpty, "signin wrote \(remote.homeFiles()) on the remote side")
    }
}
