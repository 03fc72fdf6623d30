import Foundation
import SignInKit
import Testing

/// A provider that ignores `resource` (docs/tokens.md: Keycloak, Okta, Entra ID, Google) answers a token for the
/// whole client: `token --resource` says so, and a forwarded session restricted to that API is never handed it.
@Suite struct ProviderIgnoringResourceTests {
    @Test func aTokenNotRestrictedToTheAPIIsSaidAndNeverForwardedToARestrictedSession() throws {
        let strict = try Shared.strict.get()
        let orders = TokensForEveryAPITests.orders
        let box = try strict.signedInSandbox(["jwt_access_tokens": true, "ignore_resource": true], extra: ["resources": [orders]])
        box.environment["XDG_RUNTIME_DIR"] = try box.shortFolder()
        box.environment["XDG_STATE_HOME"] = box.root.appendingPathComponent("state").path
        let r = try box.signin("token", "--resource", orders, "--json")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("not restricted to it") && r.stderr.contains("RFC 8707"), "\(r.stderr)")
        #expect(TokensForEveryAPITests.json(r.stdout)["restricted"] as? Bool == false, "\(r.stdout)")
        // From the cache, still said.
        let cached = try box.signin("token", "--resource", orders)
        #expect(cached.status == 0 && cached.stderr.contains("not restricted to it"), "\(cached.stderr)")
        let remote = try RemoteMachine(box)
        let only = try box.signin(["ssh", "--resource", orders] + remote.sshArguments + ["signin token --resource \(orders) >/dev/null; echo \"resource=$?\""])
        #expect(only.stdout.contains("resource=3"), "\(only.stdout) \(only.stderr)")
        #expect(only.stderr.contains("not restricted to it"), "\(only.stderr)")

        // A provider that honours it: no word.
        let honest = try strict.signedInSandbox(["jwt_access_tokens": true], extra: ["resources": [orders]])
        let ok = try honest.signin("token", "--resource", orders)
        #expect(ok.status == 0 && !ok.stderr.contains("not restricted"), "\(ok.stderr)")
    }
}
