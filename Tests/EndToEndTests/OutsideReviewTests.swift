import Foundation
import Testing

/// What the outside review attacked, each as the attack itself against the real binary: another local user,
/// a rebinding web page, a hostile provider, a leaky child process, a signal at the worst moment.
@Suite struct OutsideReviewTests {
    /// Another local user who read the authorization URL (it is in the browser's command line) approves the same
    /// request with their own account and delivers that code with the right state. The listener closes their
    /// connection unanswered, says so once, and the real sign-in completes as the person at the keyboard.
    @Test func aCallbackFromAnotherLocalUserIsRefusedAndTheRealSignInCompletes() throws {
        guard geteuid() == 0 else {
            print("skipped: acting as another user needs root here (setpriv to uid 65534)")
            return
        }
        let strict = try Shared.strict.get()
        let box = try strict.sandbox()
        let r = try box.signin("login", env: ["STANDIN_MODE": "otheruser,allow"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == "Signed in as Alice Example <alice@example.org>\n")
        #expect(r.stderr.contains("refused a connection from another user, uid 65534"), "\(r.stderr)")
        let attack = try #require(box.standinSteps().first { $0["step"] as? String == "otheruser" })
        // Closed without an answer: curl sees an empty reply (52) or a reset (56), never an HTTP status.
        #expect([52, 56].contains(attack["curl_exit"] as? Int ?? 0) && attack["http"] as? String == "000", "\(attack)")
        #expect(try box.signin("whoami").stdout.contains("alice@example.org"))
    }

    /// The same attack with the check turned off succeeds, which is what the setting is for (relays through
    /// another user) and shows the check above is what stops it.
    @Test func withTheCheckOffTheOtherUsersCodeWins() throws {
        guard geteuid() == 0 else {
            print("skipped: acting as another user needs root here (setpriv to uid 65534)")
            return
        }
        let strict = try Shared.strict.get()
        let box = try strict.sandbox(extra: ["listener_same_user_only": false])
        let r = try box.signin("login", env: ["STANDIN_MODE": "otheruser,allow"])
        #expect(r.stdout == "Signed in as Mallory Example <mallory@example.org>\n", "\(r.stderr)")
    }

    /// A web page that made its own host name resolve to 127.0.0.1 reaches the listener with its own Host.
    @Test func aRequestUnderAForeignHostIsRefused() throws {
        let strict = try Shared.strict.get()
        let box = try strict.sandbox()
        let r = try box.signin("login", env: ["STANDIN_MODE": "rebind,allow"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == "Signed in as Alice Example <alice@example.org>\n")
        let attack = try #require(box.standinSteps().first { $0["step"] as? String == "rebind" })
        #expect((attack["status_line"] as? String)?.hasPrefix("HTTP/1.1 400") == true, "\(attack)")
        #expect(r.stderr.contains("host \"rebind.example:"), "\(r.stderr)")
    }

    /// Escape sequences and line breaks from a provider never reach the terminal; JSON keeps the value, escaped.
    @Test func controlCharactersFromTheProviderAreNotPrinted() throws {
        let strict = try Shared.strict.get()
        let hostile = "Mallory\u{1B}[2K\rAlice Example\u{9B}0m"
        let box = try strict.signedInSandbox(["id_token_claims": ["name": hostile, "email": "alice@example.org\r\n\u{1B}[1A"]])
        for cmd in ["whoami", "status", "restore"] {
            let r = try box.signin(cmd)
            #expect(r.status == 0)
            #expect(!r.stdout.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x9B || $0.value == 0x0D }, "\(cmd): \(r.stdout.debugDescription)")
            #expect(r.stdout.contains("Mallory[2KAlice Example0m <alice@example.org[1A>"), "\(cmd): \(r.stdout.debugDescription)")
        }
        let json = try box.signin("whoami", "--json")
        #expect(json.stdout.contains(#"Mallory\u001b[2K\rAlice Example"#), "\(json.stdout)")
        try strict.control(box.clientID, ["token_fault": "invalid_request", "error_description": "ok\u{1B}]0;owned\u{07}\r\nsigned in as root"])
        let e = try box.signin("token", "--force-refresh")
        #expect(e.status == 5)
        #expect(!e.stderr.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 || $0.value == 0x0D }, "\(e.stderr.debugDescription)")
        #expect(e.stderr.components(separatedBy: "\n").filter { !$0.isEmpty }.count == 1, "one line: \(e.stderr.debugDescription)")
    }

    /// The browser is started with nothing of ours open above standard error: not the descriptors signin
    /// inherited, not libcurl's sockets of the key prefetch running on another thread.
    @Test func theBrowserInheritsNoDescriptorAboveStandardError() throws {
        let strict = try Shared.strict.get()
        let box = try strict.sandbox()
        // signin itself starts with descriptor 7 open and not close-on-exec, as a careless parent leaves it.
        let r = try Subprocess.run("/bin/sh", ["-c", "exec \"$0\" login 7</dev/null", Paths.signin],
                                   env: box.environment)
        #expect(r.status == 0, "\(r.stderr)")
        let step = try #require(box.standinSteps().first { $0["step"] as? String == "fds" })
        let fds = (step["fds"] as? [String: String] ?? [:]).keys.compactMap(Int.init).sorted()
        #expect(fds == [0, 1, 2], "\(step)")
    }

    /// RFC 9207 2.4: a provider that says it always sends `iss` and then does not is refused.
    @Test func aCallbackWithoutIssIsRefusedWhenTheProviderAdvertisesIt() throws {
        let strict = try Provider(script: "strict_provider.py", environment: ["STRICT_DISCOVERY": #"{"authorization_response_iss_parameter_supported": true}"#])
        let box = try strict.sandbox(["iss_param": false])
        let r = try box.signin("login", "--timeout", "3")
        #expect(r.status == 6, "\(r.stderr)")
        #expect(r.stderr.contains("no iss parameter"), "\(r.stderr)")
        #expect(box.entryFile() == nil)
        let good = try strict.sandbox()
        #expect(try good.signin("login").status == 0)
    }

    /// Django OAuth Toolkit lists its revocation endpoint only in RFC 8414 metadata.
    @Test func revocationIsFoundInAuthorizationServerMetadata() throws {
        let strict = try Provider(script: "strict_provider.py", environment: ["STRICT_DISCOVERY": #"{"revocation_endpoint": null}"#, "STRICT_AS_METADATA": "1"])
        let box = try strict.signedInSandbox()
        let r = try box.signin("logout", "--revoke")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try strict.stats(box.clientID)["revocations"] as? Int == 1)
        #expect(box.entryFile() == nil)
    }

    /// With no revocation endpoint anywhere, `logout --revoke` changes nothing and says what to do.
    @Test func logoutRevokeWithNoEndpointChangesNothing() throws {
        let strict = try Provider(script: "strict_provider.py", environment: ["STRICT_DISCOVERY": #"{"revocation_endpoint": null}"#])
        let box = try strict.signedInSandbox()
        let before = box.storeSnapshot()
        let r = try box.signin("logout", "--revoke")
        #expect(r.status == 2, "\(r.stderr)")
        #expect(r.stderr.contains("revocation_endpoint") && r.stderr.contains("nothing was changed"), "\(r.stderr)")
        #expect(box.storeSnapshot() == before)
        #expect(try box.signin("token").status == 0)
    }

    /// A signal that arrives while a rotating refresh is in flight waits until the new refresh token is saved.
    @Test(arguments: [SIGTERM, SIGHUP, SIGINT]) func aSignalDuringARotatingRefreshLosesNothing(sig: Int32) throws {
        let strict = try Shared.strict.get()
        let box = try strict.signedInSandbox(["rotate": true])
        try strict.control(box.clientID, ["refresh_delay": 1.0])
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Paths.signin)
        p.arguments = ["token", "--force-refresh"]
        p.environment = box.environment
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        // Signal once the provider has the request (it has rotated; its answer comes a second later).
        #expect(waitFor { (try? strict.stats(box.clientID)["refreshes"] as? Int ?? 0) == 1 })
        kill(p.processIdentifier, sig)
        p.waitUntilExit()
        #expect(p.terminationReason == .uncaughtSignal && p.terminationStatus == sig,
                "the signal still ends it, after the save: \(p.terminationReason.rawValue) \(p.terminationStatus)")
        try strict.control(box.clientID, ["refresh_delay": 0])
        let next = try box.signin("token", "--force-refresh")
        #expect(next.status == 0, "the rotated refresh token was kept: \(next.stderr)")
    }

    /// The same after a sign-in in the same process (`exec --login`, whose sign-in ignores and then restores the
    /// signals): a SIGTERM during the refresh that follows still waits for the save, and then ends signin.
    @Test func aSignalDuringARefreshAfterASignInInTheSameProcessLosesNothing() throws {
        let strict = try Shared.strict.get()
        let box = try strict.sandbox(["rotate": true, "access_ttl": 30])
        try strict.control(box.clientID, ["refresh_delay": 1.0])
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Paths.signin)
        // --min-ttl beyond the token's life: the sign-in is followed by a refresh, in the same process.
        p.arguments = ["exec", "--login", "--min-ttl", "120", "--", "/bin/true"]
        p.environment = box.environment
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        #expect(waitFor { (try? strict.stats(box.clientID)["refreshes"] as? Int ?? 0) == 1 }, "the refresh after the sign-in reached the provider")
        kill(p.processIdentifier, SIGTERM)
        p.waitUntilExit()
        #expect(p.terminationReason == .uncaughtSignal && p.terminationStatus == SIGTERM,
                "the signal ends it after the save, not before, and not ignored: \(p.terminationReason.rawValue) \(p.terminationStatus)")
        try strict.control(box.clientID, ["refresh_delay": 0])
        let next = try box.signin("token", "--force-refresh")
        #expect(next.status == 0, "the rotated refresh token was kept: \(next.stderr)")
    }
}
