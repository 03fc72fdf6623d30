import Foundation
import Testing

/// The loopback listener against its attackers: another local user, a web page rebinding DNS, a provider that omits `iss`, a browser that would inherit descriptors.
@Suite struct ListenerSecurityTests {
    /// Whether this run can act as another local user (root, for setpriv to uid 65534); when not, the test is recorded
    /// as failed rather than passing without running.
    static func canActAsAnotherUser() -> Bool {
        guard geteuid() == 0 else {
            Issue.record("not run, so failed: acting as another user needs root here (setpriv to uid 65534)")
            return false
        }
        return true
    }

    /// Another local user who read the authorization URL (it is in the browser's command line) approves the same
    /// request with their own account and delivers that code with the right state. The listener closes their
    /// connection unanswered, says so once, and the real sign-in completes as the person at the keyboard.
    @Test func aCallbackFromAnotherLocalUserIsRefusedAndTheRealSignInCompletes() throws {
        guard Self.canActAsAnotherUser() else { return }
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

    /// The same over IPv6: a browser that resolved localhost to [::1] reaches the listener there (it listens on both),
    /// and the check reads the connection's owner from the kernel's IPv6 table: another user's delivery is refused
    /// as over IPv4, the person's completes the sign-in.
    @Test func overIPv6LoopbackTheOtherUsersCodeIsRefusedAndThePersonsTaken() throws {
        guard Self.canActAsAnotherUser() else { return }
        let strict = try Shared.strict.get()
        let box = try strict.sandbox()
        let r = try box.signin(["login"], env: ["STANDIN_MODE": "otheruser,allow", "STANDIN_CALLBACK_HOST": "[::1]"])
        #expect(r.status == 0 && r.stdout == "Signed in as Alice Example <alice@example.org>\n", "\(r.stdout) \(r.stderr)")
        #expect(r.stderr.contains("refused a connection from another user, uid 65534"), "\(r.stderr)")
        let attack = try #require(box.standinSteps().first { $0["step"] as? String == "otheruser" })
        #expect([52, 56].contains(attack["curl_exit"] as? Int ?? 0) && attack["http"] as? String == "000", "\(attack)")
        let final = try #require(box.standinSteps().first { $0["step"] as? String == "final" })
        #expect((final["url"] as? String)?.hasPrefix("http://[::1]:") == true, "the person's callback went over IPv6: \(final)")
    }

    /// The same attack with the check turned off succeeds, which is what the setting is for (relays through
    /// another user) and shows the check above is what stops it.
    @Test func withTheCheckOffTheOtherUsersCodeWins() throws {
        guard Self.canActAsAnotherUser() else { return }
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

    /// with `redirect_host: "localhost"`, a port whose [::1] side another program holds is refused before
    /// the browser opens, saying why (today: the browser goes to the other listener and signin times out).
    @Test func aLocalhostRedirectWhoseIPv6SideIsHeldIsRefusedBeforeTheBrowserOpens() throws {
        let strict = try Shared.strict.get()
        let holder = try SilentServer(ipv6Only: true)
        let box = try strict.sandbox(["only_localhost": true], extra: ["redirect_host": "localhost", "redirect_port": holder.port])
        let start = Date()
        let r = try box.signin("login", "--timeout", "15")
        #expect(r.status == 1, "\(r.stderr)")
        #expect(r.stderr.contains("Cannot listen on [::1]:\(holder.port)") && r.stderr.contains("localhost:\(holder.port)"), "\(r.stderr)")
        #expect(r.stderr.contains("redirect_host"), "the message says what to change: \(r.stderr)")
        #expect(Date().timeIntervalSince(start) < 10, "refused at once, not after the browser's timeout")
        #expect(box.standinSteps().isEmpty, "no browser was opened")
        #expect(!holder.hasPendingConnection, "nothing reached the other listener")
        #expect(box.entryFile() == nil)

        // With the port left to the system, a sign-in to localhost works (both sides are signin's).
        let free = try strict.sandbox(["only_localhost": true], extra: ["redirect_host": "localhost"])
        let ok = try free.signin("login", "--timeout", "60")
        #expect(ok.status == 0, "\(ok.stderr)")
    }
}
