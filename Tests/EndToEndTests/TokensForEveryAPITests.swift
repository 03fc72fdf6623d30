import Foundation
import SignInKit
import Testing

/// an access token for one API. Resource indicators (RFC 8707) asked for at sign-in and got one at a time
/// with a refresh; token exchange (RFC 8693) at the provider's token endpoint; each kept per resource or audience;
/// refusals with exit 7; the same through `exec`, `kubectl-credential`, the library and a forwarded agent.
@Suite struct TokensForEveryAPITests {
    static let orders = "https://orders.example.test/"
    static let billing = "https://billing.example.test/api"

    /// Whom the strict provider issued `token` for (its `aud`), and whether it is active.
    static func audience(of token: String, _ p: Provider) throws -> String? {
        let text = try p.http("GET", "/_introspect?token=" + (token.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""))
        let o = try JSONSerialization.jsonObject(with: text) as? [String: Any]
        return (o?["active"] as? Bool) == true ? o?["aud"] as? String : nil
    }

    static func json(_ text: String) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]) ?? [:]
    }

    /// Signed in with two resources: the authorization request named both; a token for each is restricted to it, the
    /// second call comes from the cache (no request at the provider), the grant's own token is untouched, and a
    /// rotated refresh token from a resource refresh is saved (the next refresh works).
    @Test func twoConfiguredResourcesEachGetATokenOfTheirOwnKeptUntilItExpires() throws {
        let strict = try Shared.strict.get()
        let box = try strict.signedInSandbox(["rotate": true], extra: ["resources": [Self.orders, Self.billing]])
        let signInStats = try strict.stats(box.clientID)
        #expect(signInStats["authorize_resources"] as? [String] == [Self.orders, Self.billing], "\(signInStats)")
        let own = try box.signin("token").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        var tokens: [String: String] = [:]
        for resource in [Self.orders, Self.billing] {
            let r = try box.signin("token", "--resource", resource, "--json")
            #expect(r.status == 0, "\(r.stderr) \(r.stdout)")
            let o = Self.json(r.stdout)
            let token = o["access_token"] as? String ?? ""
            #expect(o["resource"] as? String == resource && token != own, "\(r.stdout)")
            #expect(try Self.audience(of: token, strict) == resource, "the token is for \(resource) alone")
            tokens[resource] = token
        }
        let before = try strict.stats(box.clientID)
        #expect(before["resource_refreshes"] as? Int == 2)
        for resource in [Self.orders, Self.billing] {
            #expect(try box.signin("token", "--resource", resource).stdout.trimmingCharacters(in: .whitespacesAndNewlines) == tokens[resource])
        }
        #expect(try strict.stats(box.clientID)["token_requests"] as? Int == before["token_requests"] as? Int, "the second calls asked the provider nothing")
        #expect(try box.signin("token").stdout.trimmingCharacters(in: .whitespacesAndNewlines) == own, "the grant's own token is unchanged")
        // Each resource refresh rotated the refresh token: had one not been saved, this refresh would be refused.
        #expect(try box.signin("token", "--force-refresh").status == 0)
        // Forced: a new token for the resource.
        let forced = try box.signin("token", "--resource", Self.orders, "--force-refresh").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(!forced.isEmpty && forced != tokens[Self.orders])
    }

    /// A resource the sign-in did not ask for is refused by the provider (`invalid_target`): exit 7, saying which,
    /// nothing stored, and the grant still works. A malformed one is a usage error before any request.
    @Test func aResourceTheProviderRefusesExitsSevenAndStoresNothing() throws {
        let strict = try Shared.strict.get()
        let box = try strict.signedInSandbox(extra: ["resources": [Self.orders]])
        let before = box.storeSnapshot()
        // Not among the configuration's resources: the person's grant never serves it, and no server is asked.
        let unlisted = try box.signin("token", "--resource", "https://elsewhere.example.test/")
        #expect(unlisted.status == 3 && unlisted.stderr.contains("signin login --resource https://elsewhere.example.test/") && unlisted.stdout.isEmpty,
                "\(unlisted.status) \(unlisted.stderr)")
        // Listed after the sign-in (so not asked for then): the provider refuses it.
        try box.editConfig { $0["resources"] = [Self.orders, "https://elsewhere.example.test/"] }
        let r = try box.signin("token", "--resource", "https://elsewhere.example.test/")
        #expect(r.status == 7 && r.stderr.contains("https://elsewhere.example.test/") && r.stdout.isEmpty, "\(r.status) \(r.stderr)")
        #expect(box.storeSnapshot() == before, "nothing stored")
        #expect(try box.signin("token", "--resource", Self.orders).status == 0)
        let bad = try box.signin("token", "--resource", "https://orders.example.test/#frag")
        #expect(bad.status == 2 && bad.stderr.contains("--resource"), "\(bad.stderr)")
        let config = try box.signin(["token"], env: [:])
        #expect(config.status == 0)
        try box.writeConfig(["client_id": box.clientID, "issuer": strict.issuer, "resources": ["not a uri"]])
        let invalid = try box.signin("token")
        #expect(invalid.status == 2 && invalid.stderr.contains("resources"), "\(invalid.stderr)")
    }

    /// Token exchange: an exchanged token for each of two audiences (each for its audience, cached), a refused
    /// audience exits 7, and a provider whose discovery lists no token exchange is told before any request.
    @Test func exchangedTokensForTwoAudiencesAreCachedAndARefusalExitsSeven() throws {
        let strict = try Shared.strict.get()
        let box = try strict.signedInSandbox()
        var tokens: [String: String] = [:]
        for audience in ["orders-api", "billing-api"] {
            let r = try box.signin("token", "--audience", audience, "--json")
            let o = Self.json(r.stdout)
            let token = o["access_token"] as? String ?? ""
            #expect(r.status == 0 && o["audience"] as? String == audience, "\(r.stdout) \(r.stderr)")
            #expect(try Self.audience(of: token, strict) == audience)
            tokens[audience] = token
        }
        #expect(try strict.stats(box.clientID)["exchanges"] as? Int == 2)
        #expect(try box.signin("token", "--audience", "orders-api").stdout.trimmingCharacters(in: .whitespacesAndNewlines) == tokens["orders-api"])
        #expect(try strict.stats(box.clientID)["exchanges"] as? Int == 2, "the second call came from the cache")
        let refused = try box.signin("token", "--audience", "refused-api")
        #expect(refused.status == 7 && refused.stderr.contains("refused-api"), "\(refused.status) \(refused.stderr)")

        let noExchange = try Provider(script: "strict_provider.py", environment: ["STRICT_DISCOVERY": #"{"grant_types_supported": ["authorization_code", "refresh_token"]}"#])
        defer { noExchange.stop() }
        let other = try noExchange.signedInSandbox()
        let early = try other.signin("token", "--audience", "orders-api")
        #expect(early.status == 7 && early.stderr.contains("token exchange"), "\(early.stderr)")
        #expect(try noExchange.stats(other.clientID)["exchanges"] == nil, "no request was sent")
    }

    /// Through a forwarded agent (`signin ssh`): the remote side gets the token for a resource and an exchanged
    /// token, the laptop's own ones, and a refused audience exits 7 there too.
    @Test func overSSHTheForwardedAgentAnswersForOneAPI() throws {
        let strict = try Shared.strict.get()
        let box = try strict.signedInSandbox(extra: ["resources": [Self.orders]])
        box.environment["XDG_RUNTIME_DIR"] = try box.shortFolder()
        box.environment["XDG_STATE_HOME"] = box.root.appendingPathComponent("state").path
        let resourceToken = try box.signin("token", "--resource", Self.orders).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let exchanged = try box.signin("token", "--audience", "orders-api").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let remote = try RemoteMachine(box)
        let script = """
            echo "resource=$(signin token --resource \(Self.orders))"
            echo "audience=$(signin token --audience orders-api)"
            signin token --audience refused-api >/dev/null; echo "refused=$?"
            """
        let r = try box.signin(["ssh"] + remote.sshArguments + [script])
        #expect(r.stdout.contains("resource=\(resourceToken)\n") && r.stdout.contains("audience=\(exchanged)\n"), "\(r.stdout) \(r.stderr)")
        #expect(r.stdout.contains("refused=7") && r.stderr.contains("refused-api"), "\(r.stdout) \(r.stderr)")
        // A session restricted to one audience and one resource: those, and nothing else (not the grant's own token,
        // not an ID token, not another API).
        let restricted = """
            echo "audience=$(signin token --audience orders-api)"
            echo "resource=$(signin token --resource \(Self.orders))"
            signin token >/dev/null; echo "own=$?"
            signin id-token >/dev/null; echo "id=$?"
            signin token --audience billing-api >/dev/null; echo "other=$?"
            """
        let only = try box.signin(["ssh", "--audience", "orders-api", "--resource", Self.orders] + remote.sshArguments + [restricted])
        #expect(only.stdout.contains("audience=\(exchanged)\n") && only.stdout.contains("resource=\(resourceToken)\n"), "\(only.stdout) \(only.stderr)")
        #expect(only.stdout.contains("own=3") && only.stdout.contains("id=3") && only.stdout.contains("other=3"), "\(only.stdout) \(only.stderr)")
        #expect(only.stderr.contains("gives only access tokens for --audience orders-api"), "\(only.stderr)")
    }

    /// Pointed at an API with nothing configured (RFC 9728, 7591, 8707): the API's metadata names the authorization
    /// server, signin registers there as a public native client (the port kept with the registration: the strict
    /// provider matches it exactly), signs in asking for the API, and gets a token the API accepts; the next calls
    /// come from the store (no registration, no metadata read, no request at the provider). Metadata for another
    /// resource is refused.
    @Test func pointedAtAnAPIWithNothingConfiguredItRegistersSignsInAndCaches() throws {
        let strict = try Shared.strict.get()
        let box = try strict.sandbox()
        box.environment["SIGNIN_CONFIG"] = ""  // no configuration anywhere
        let api = strict.issuer + "/api/orders"
        func apiStats() throws -> [String: Any] { try strict.stats("_api") }
        let registrations = try apiStats()["registrations"] as? Int ?? 0
        let login = try box.signin("login", "--resource", api)
        #expect(login.status == 0 && login.stdout.contains("Signed in as"), "\(login.stdout) \(login.stderr)")
        #expect(try apiStats()["registrations"] as? Int == registrations + 1, "signin registered itself once")
        let first = try box.signin("token", "--resource", api)
        let token = first.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(first.status == 0 && !token.isEmpty, "\(first.stderr)")
        let call = try Subprocess.run("/usr/bin/curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "-H", "Authorization: Bearer \(token)", api])
        #expect(call.stdout == "200", "the API accepts the token: \(call.stdout)")
        let fetches = try apiStats()["metadata_fetches"] as? Int
        let requests = try box.signin("token", "--resource", api)
        #expect(requests.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == token, "\(requests.stderr)")
        #expect(try apiStats()["metadata_fetches"] as? Int == fetches && (try apiStats()["registrations"] as? Int) == registrations + 1,
                "the second call read no metadata and registered nothing")
        // Without a token, the API says where its metadata is (RFC 9728 5.1).
        let challenge = try Subprocess.run("/usr/bin/curl", ["-s", "-D", "-", "-o", "/dev/null", api]).stdout
        #expect(challenge.contains("resource_metadata=\"\(strict.issuer)/.well-known/oauth-protected-resource/api/orders\""), "\(challenge)")
        // Metadata that claims another resource is refused, and nothing is registered for it.
        let mixed = try box.signin("login", "--resource", strict.issuer + "/api/elsewhere")
        #expect(mixed.status == 5 && mixed.stderr.contains("resource_mismatch"), "\(mixed.status) \(mixed.stderr)")
        #expect(try apiStats()["registrations"] as? Int == registrations + 1)
        // An address that publishes no metadata at all (no 401 naming it, nothing at either well-known place): said
        // in a sentence naming the first place looked, exit 5, nothing registered or stored for it.
        let plain = strict.issuer + "/plain/thing"
        let none = try box.signin("login", "--resource", plain)
        #expect(none.status == 5, "\(none.status) \(none.stderr)")
        #expect(none.stderr.contains("signin: The API's metadata (\(strict.issuer)/.well-known/oauth-protected-resource/plain/thing) answered with error \"http_404\": the API publishes no protected resource metadata (RFC 9728) there"),
                "\(none.stderr)")
        #expect(try apiStats()["registrations"] as? Int == registrations + 1)
        #expect(try box.signin("accounts").stdout.contains(plain) == false)
    }

    /// Against idpyoidc 5's OP (IdentityPython; a server no one here wrote), whose token exchange helper decides: an
    /// exchanged token for each of two audiences (its `aud` the audience; kept: the second call asks nothing), and an
    /// audience its policy does not allow is idpyoidc's `invalid_target`: exit 7, nothing stored.
    @Test func idpyoidcExchangesForTwoAudiencesAndRefusesAThird() throws {
        let p = try Provider(script: "idpyoidc_provider.py")
        defer { p.finish() }  // it removes its folder (idpyoidc's keys) once its input closes
        let port = try freeLoopbackPort()
        let client: [String: Any] = ["client_id": "signin-idpy", "client_secret": "idpy-secret-1", "redirect_uri": "http://127.0.0.1:\(port)/callback",
                                     "audiences": ["orders-api", "billing-api"]]
        _ = try p.http("POST", "/_client", body: JSONSerialization.data(withJSONObject: client))
        let box = try Sandbox(issuer: p.issuer, clientID: "signin-idpy", secret: "idpy-secret-1",
                              extra: ["redirect_port": port, "dpop": "never", "pushed_authorization": "never"])
        let login = try box.signin("login")
        try #require(login.status == 0 && login.stdout.contains("Diana Krall"), "\(login.stdout) \(login.stderr)")
        var tokens: [String: String] = [:]
        for audience in ["orders-api", "billing-api"] {
            let r = try box.signin("token", "--audience", audience, "--json")
            let token = Self.json(r.stdout)["access_token"] as? String ?? ""
            #expect(r.status == 0 && !token.isEmpty, "\(r.stderr)")
            // idpyoidc's tokens are JWTs: their `aud` is the audience asked.
            let payload = token.split(separator: ".").dropFirst().first.map(String.init) ?? ""
            var b64 = payload.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            while b64.count % 4 != 0 { b64 += "=" }
            let claims = Data(base64Encoded: b64).flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] } ?? [:]
            #expect((claims["aud"] as? [String]) == [audience] || claims["aud"] as? String == audience, "\(claims)")
            tokens[audience] = token
        }
        let answered = try JSONSerialization.jsonObject(with: p.http("GET", "/_stats")) as? [String: Any]
        #expect(answered?["exchanges"] as? Int == 2)
        #expect(try box.signin("token", "--audience", "orders-api").stdout.trimmingCharacters(in: .whitespacesAndNewlines) == tokens["orders-api"])
        let again = try JSONSerialization.jsonObject(with: p.http("GET", "/_stats")) as? [String: Any]
        #expect(again?["exchanges"] as? Int == 2, "the second call came from the cache")
        let before = box.storeSnapshot()
        let refused = try box.signin("token", "--audience", "payroll-api")
        #expect(refused.status == 7 && refused.stderr.contains("payroll-api"), "\(refused.status) \(refused.stderr)")
        #expect(box.storeSnapshot() == before)
    }

    /// Through `exec`, `kubectl-credential` and the library: the same tokens for the same API.
    @Test func execKubectlAndTheLibraryGetTheSameTokenForAnAPI() async throws {
        let strict = try Shared.strict.get()
        let box = try strict.signedInSandbox(extra: ["resources": [Self.orders]])
        let token = try box.signin("token", "--resource", Self.orders).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let exec = try box.signin("exec", "--resource", Self.orders, "--", "/bin/sh", "-c", "printf %s \"$SIGNIN_ACCESS_TOKEN\"")
        #expect(exec.status == 0 && exec.stdout == token, "\(exec.stderr)")
        let exchanged = try box.signin("exec", "--audience", "orders-api", "--", "/bin/sh", "-c", "printf %s \"$SIGNIN_ACCESS_TOKEN\"")
        let exchangedFor = try Self.audience(of: exchanged.stdout, strict)
        #expect(exchanged.status == 0 && exchangedFor == "orders-api", "\(exchanged.stderr)")
        // git: a host given the API's resource gets that token; another allowed host gets the grant's own.
        try box.writeConfig(["client_id": box.clientID, "issuer": strict.issuer, "resources": [Self.orders],
                             "git_hosts": ["git.orders.example.test", "git.example.test"], "git_resources": ["git.orders.example.test": Self.orders]])
        let git = try box.signin(["git-credential", "get"], stdin: Data("protocol=https\nhost=git.orders.example.test\n\n".utf8))
        #expect(git.status == 0 && git.stdout.contains("password=\(token)\n"), "\(git.stdout) \(git.stderr)")
        let own = try box.signin("token").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let other = try box.signin(["git-credential", "get"], stdin: Data("protocol=https\nhost=git.example.test\n\n".utf8))
        #expect(other.stdout.contains("password=\(own)\n"), "\(other.stdout) \(other.stderr)")
        let kubectl = try box.signin("kubectl-credential", "--token", "access", "--resource", Self.orders)
        let kubeToken = (Self.json(kubectl.stdout)["status"] as? [String: Any])?["token"] as? String
        #expect(kubectl.status == 0 && kubeToken == token, "\(kubectl.stdout) \(kubectl.stderr)")
        var config = SignInConfiguration(clientID: box.clientID, issuer: strict.issuer)
        config.resources = [Self.orders]
        let client = SignInClient(configuration: config, storeDirectory: box.storeDir, environment: box.environment)
        var request = TokenRequest()
        request.resource = Self.orders
        let issued = try await client.token(for: request)
        #expect(issued.token.value == token && issued.resource == Self.orders)
        let user = try await client.restorePreviousSignIn()
        let headers = try await user.authorizationHeaders(method: "GET", url: URL(string: Self.orders)!, resource: Self.orders)
        #expect(headers["Authorization"] == "Bearer " + token, "the library's headers carry the API's own token")
        request.resource = nil
        request.audience = "refused-api"
        do {
            _ = try await client.token(for: request)
            Issue.record("a refused audience answered")
        } catch {
            guard case .targetRefused(_, let target, _) = error else { Issue.record("\(error)"); return }
            #expect(target == "refused-api")
        }
    }
}
