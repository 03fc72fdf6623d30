import Foundation
import Testing

/// A forwarded session restricted to APIs (`signin ssh --audience A --resource R`) admits only what it was given,
/// decided over the whole request: the kind, whose token, federation and the target pair. Anything else is refused on
/// the laptop, the approval covers one whole request, and agent.log names what was served.
@Suite struct ForwardedSessionPolicyTests {
    static let orders = TokensForEveryAPITests.orders
    static let billing = TokensForEveryAPITests.billing

    /// The review's requests, sent by hand on the remote side: Google Cloud beside an allowed audience, the
    /// configuration's service account, another API beside an allowed audience, and a key the agent does not know.
    @Test func aSessionRestrictedToAPIsRefusesGoogleCloudServiceAccountsAndOtherAPIs() throws {
        let strict = try Shared.strict.get()
        let extra: [String: Any] = ["google_sts_endpoint": strict.issuer + "/v1/token", "google_federation_audience": GoogleFederationTests.audience,
                                    "resources": [Self.orders, Self.billing]]
        let box = try GoogleShape.sandbox(strict, settings: ["sts_audiences": [GoogleFederationTests.audience], "sa_allowed": [GoogleShape.serviceAccount]],
                                          extra: extra)
        box.environment["XDG_RUNTIME_DIR"] = try box.shortFolder()
        box.environment["XDG_STATE_HOME"] = box.root.appendingPathComponent("state").path
        let exchanged = try box.signin("token", "--audience", "orders-api").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(exchanged.hasPrefix("xt-"), "\(exchanged)")
        // Then the configuration names a service account for its tokens (`impersonate_service_account`).
        var config = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: box.configPath))) as? [String: Any] ?? [:]
        config["impersonate_service_account"] = GoogleShape.serviceAccount
        try box.writeConfig(config)
        let remote = try RemoteMachine(box)
        func ask(_ name: String, _ query: String) -> String {
            "echo \"\(name)=$(curl -s --unix-socket \"$SIGNIN_AGENT_SOCK\" 'http://agent/v1/token?\(query)')\""
        }
        let script = [
            ask("cloud", "kind=access&audience=orders-api&google_cloud=1&configured_chain=1"),
            ask("configured", "kind=access&audience=orders-api&configured_chain=1"),
            ask("pair", "kind=access&audience=orders-api&resource=" + Self.billing.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!),
            ask("unknown", "kind=access&audience=orders-api&scope_override=1"),
        ].joined(separator: "\n")
        let r = try box.signin(["ssh", "--audience", "orders-api", "--resource", Self.orders] + remote.sshArguments + [script])
        let lines = Dictionary(r.stdout.split(separator: "\n").compactMap { line -> (String, String)? in
            let parts = line.split(separator: "=", maxSplits: 1)
            return parts.count == 2 ? (String(parts[0]), String(parts[1])) : nil
        }, uniquingKeysWith: { $1 })
        for name in ["cloud", "pair", "unknown"] {
            let answer = TokensForEveryAPITests.json(lines[name] ?? "")
            #expect(answer["error"] as? String == "refused" && answer["token"] == nil, "\(name): \(lines[name] ?? "nothing") \(r.stderr)")
        }
        #expect((lines["cloud"] ?? "").contains("never a token for Google Cloud"), "\(lines["cloud"] ?? "")")
        // No federated or service-account token was bought for the remote side.
        let stats = try strict.stats(box.clientID)
        #expect(stats["sts_exchanges"] == nil, "\(stats)")
        // The configuration's service account is not what the session was given: the person's token for the API.
        #expect(TokensForEveryAPITests.json(lines["configured"] ?? "")["token"] as? String == exchanged, "\(lines["configured"] ?? "")")
        let log = SSHAgentTests.log(box)
        #expect(log.contains("served access token for audience orders-api for alice@example.org"), "\(log)")
        #expect(log.contains("refused access token for Google Cloud for audience orders-api"), "\(log)")
    }

    /// with `impersonate_service_account` in the laptop's configuration, `signin token` over a forwarded
    /// session gives the same principal as on the laptop (the agent's token path applies the configured chain),
    /// and `--impersonate-service-account` stays refused unless forwarded.
    @Test func theConfiguredServiceAccountIsThePrincipalOverAForwardedSessionToo() throws {
        let strict = try Shared.strict.get()
        let sa = GoogleShape.serviceAccount
        let box = try GoogleShape.sandbox(strict, settings: ["sa_allowed": [sa]], extra: ["impersonate_service_account": sa])
        box.environment["XDG_RUNTIME_DIR"] = try box.shortFolder()
        box.environment["XDG_STATE_HOME"] = box.root.appendingPathComponent("state").path
        let here = try box.signin("token", "--json")
        let hereToken = GoogleShape.json(here.stdout)["access_token"] as? String
        #expect(GoogleShape.json(here.stdout)["sub"] as? String == sa && hereToken?.hasPrefix("sa-at-") == true, "\(here.stdout) \(here.stderr)")
        let remote = try RemoteMachine(box)
        let r = try box.signin(["ssh"] + remote.sshArguments + ["signin token --json; echo; signin exec -- sh -c 'printf \"exec=%s\\n\" \"$SIGNIN_ACCESS_TOKEN\"'"])
        #expect(r.status == 0, "\(r.stderr)")
        let first = r.stdout.split(separator: "\n").first.map(String.init) ?? ""
        #expect(GoogleShape.json(first)["sub"] as? String == sa, "the same principal there: \(r.stdout)")
        #expect(GoogleShape.json(first)["access_token"] as? String == hereToken, "\(r.stdout)")
        #expect(r.stdout.contains("exec=\(hereToken ?? "-")"), "\(r.stdout)")
    }
}
