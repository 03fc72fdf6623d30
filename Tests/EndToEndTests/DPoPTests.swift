import Foundation
@testable import SignInKit
@testable import SignInBase
@testable import SignInTransport
@testable import SignInProtocol
@testable import SignInStorage
import Testing

/// DPoP (RFC 9449): where discovery offers it, the grant is bound to a key of this machine. The strict provider
/// checks every proof (signature, method, URL, time, replay, the nonce when it asks for one) and binds the refresh
/// token and the access token to the key's thumbprint.
@Suite struct DPoPTests {
    static let offered = Result { try Provider(script: "strict_provider.py", environment: ["STRICT_DISCOVERY": #"{"dpop_signing_alg_values_supported": ["ES256", "RS256"]}"#]).endingWithTheTestProcess() }

    @Test func theGrantIsBoundToTheKeyAndTheTokenGoesWithAProof() throws {
        let p = try Self.offered.get()
        let box = try p.signedInSandbox(["rotate": true])
        var stats = try p.stats(box.clientID)
        #expect(stats["dpop_proofs"] as? Int == 1 && stats["dpop_refused"] == nil, "the code exchange carried a proof: \(stats)")
        let json = try box.signin("token", "--json")
        #expect(json.status == 0 && json.stdout.contains(#""token_type":"DPoP""#), "\(json.stdout)\(json.stderr)")
        #expect(try box.signin("status").stdout.contains("bound to a key kept with it in the store (DPoP)"))
        let token = try box.signin("token").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let userinfo = p.issuer + "/userinfo"

        // The access token reaches the API with a proof that names it, and not as a bearer token.
        let proof = try box.signin("dpop-proof", "--url", userinfo)
        #expect(proof.status == 0 && proof.stdout.split(separator: ".").count == 3, "\(proof.stderr)")
        let proofText = proof.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try httpStatus(["-H", "Authorization: DPoP \(token)", "-H", "DPoP: \(proofText)", userinfo]) == "200")
        #expect(try httpStatus(["-H", "Authorization: Bearer \(token)", userinfo]) == "401", "a DPoP token is no bearer token")
        #expect(try httpStatus(["-H", "Authorization: DPoP \(token)", "-H", "DPoP: \(proofText)", userinfo]) == "401", "a replayed proof is refused")
        #expect(try p.stats(box.clientID)["dpop_replays"] as? Int == 1)

        // The refresh token copied without the key gets nothing, with a key of its own neither; signin still refreshes.
        let copied = try #require(try p.stats(box.clientID)["copied_refresh_token"] as? String)
        var code = try httpStatus(["-d", "client_id=\(box.clientID)", "-d", "grant_type=refresh_token", "--data-urlencode", "refresh_token=\(copied)", p.issuer + "/token"])
        #expect(code == "400", "a refresh without a proof")
        let thief = try ProofKey.generate()
        let stolenProof = try DPoP.proof(thief, method: "POST", url: p.issuer + "/token")
        code = try httpStatus(["-d", "client_id=\(box.clientID)", "-H", "DPoP: \(stolenProof)", "-d", "grant_type=refresh_token", "--data-urlencode", "refresh_token=\(copied)", p.issuer + "/token"])
        #expect(code == "400", "a refresh with another key's proof")
        stats = try p.stats(box.clientID)
        #expect(stats["dpop_unbound_refreshes"] as? Int == 2 && stats["refreshes"] as? Int == 2, "\(stats)")
        let forced = try box.signin("token", "--force-refresh")
        #expect(forced.status == 0 && forced.stdout.trimmingCharacters(in: .whitespacesAndNewlines) != token, "\(forced.stderr)")
        #expect(try p.stats(box.clientID)["dpop_unbound_refreshes"] as? Int == 2, "signin's own refresh carried the proof")

        // `signin exec` tells its command the token is DPoP-bound; the command gets proofs from `signin dpop-proof`.
        let exec = try box.signin("exec", "--", "/bin/sh", "-c", "echo \"$SIGNIN_TOKEN_TYPE\"")
        #expect(exec.status == 0 && exec.stdout == "DPoP\n", "\(exec.stdout)\(exec.stderr)")
        let file = try box.signin("exec", "--token-file", "--", "/bin/sh", "-c", "echo \"$SIGNIN_TOKEN_TYPE\"")
        #expect(file.status == 0 && file.stdout == "DPoP\n", "\(file.stdout)\(file.stderr)")

        // Revocation carries a proof too.
        let out = try box.signin("logout", "--revoke")
        let revocations = try p.stats(box.clientID)["dpop_revocations"] as? Int
        #expect(out.status == 0 && revocations == 1, "\(out.stderr)")
    }

    @Test func theNonceDanceAndTheChoiceToStayBearer() throws {
        let p = try Self.offered.get()
        let box = try p.sandbox(["dpop_nonce": true, "dpop_required": true])
        var r = try box.signin("login")
        #expect(r.status == 0, "\(r.stderr)")
        r = try box.signin("token", "--force-refresh")
        #expect(r.status == 0, "\(r.stderr)")
        let stats = try p.stats(box.clientID)
        #expect(stats["dpop_nonce_challenges"] as? Int == 2 && (stats["refreshes_by_sub"] as? [String: Int])?["alice"] == 1,
                "a nonce asked for at the exchange and at the refresh, each answered once: \(stats)")

        // `dpop: never` keeps bearer tokens where the provider offers DPoP; `dpop-proof` then says none is needed.
        let bearer = try p.signedInSandbox(extra: ["dpop": "never"])
        #expect(try p.stats(bearer.clientID)["dpop_proofs"] == nil)
        #expect(try bearer.signin("token", "--json").stdout.contains(#""token_type":"Bearer""#))
        r = try bearer.signin("dpop-proof", "--url", p.issuer + "/userinfo")
        #expect(r.status != 0 && r.stderr.contains("not bound to a key"), "\(r.stderr)")

        // `dpop: always` against a provider that does not offer it is a clear error before any browser opens.
        let plain = try Shared.strict.get().sandbox(extra: ["dpop": "always"])
        r = try plain.signin("login")
        #expect(r.status != 0 && r.stderr.contains("dpop_signing_alg_values_supported"), "\(r.stderr)")
        #expect(plain.entryFile() == nil)
    }

    @Test func theDeviceFlowPollsWithProofs() throws {
        let p = try Self.offered.get()
        let box = try p.sandbox(["dpop_required": true])
        let run = try LiveRun(box, ["login", "--device"])
        let code = try #require(run.waitFor(#"enter the code:\s+(\d{4}-\d{4})"#))
        try p.approveDevice(userCode: code)
        let r = run.finish()
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try box.signin("token", "--json").stdout.contains(#""token_type":"DPoP""#))
        let stats = try p.stats(box.clientID)
        #expect((stats["dpop_proofs"] as? Int ?? 0) >= 1 && stats["dpop_refused"] == nil, "\(stats)")
    }

    /// Over `signin ssh` the remote side gets the token and proofs the laptop signs; the key never crosses.
    @Test func overSSHTheLaptopSignsTheProofs() throws {
        let p = try Self.offered.get()
        let box = try p.signedInSandbox()
        box.environment["XDG_RUNTIME_DIR"] = try box.shortFolder()
        box.environment["XDG_STATE_HOME"] = box.root.appendingPathComponent("state").path
        let remote = try RemoteMachine(box)
        let userinfo = p.issuer + "/userinfo"
        let script = """
            signin token --json | grep -q '"token_type":"DPoP"' && echo dpop
            t=$(signin token); pr=$(signin dpop-proof --url \(userinfo))
            code=$(curl -s -o /dev/null -w "%{http_code}" -H "Authorization: DPoP $t" -H "DPoP: $pr" \(userinfo)); echo "userinfo=$code"
            signin dpop-proof --method POST --url \(p.issuer)/token >/dev/null; echo "tokenproof=$?"
            signin dpop-proof --method POST --url '\(p.issuer.uppercased())/revoke?x=1' >/dev/null; echo "revokeproof=$?"
            """
        let r = try box.signin(["ssh"] + remote.sshArguments + [script])
        #expect(r.stdout.contains("dpop") && r.stdout.contains("userinfo=200"), "\(r.stdout) \(r.stderr)")
        // Fifth review, item 2: a forwarded session is no proof oracle for the provider's own endpoints (with a copied
        // refresh token, such proofs would buy tokens), and the laptop's log names each proof's method and URL.
        #expect(r.stdout.contains("tokenproof=2") && r.stdout.contains("revokeproof=2"), "\(r.stdout) \(r.stderr)")
        #expect(r.stderr.contains("the provider's own token endpoint") && r.stderr.contains("is never given out"), "\(r.stderr)")
        let log = SSHAgentTests.log(box)
        #expect(log.contains("with a DPoP proof for GET \(userinfo)"), "\(log)")
        #expect(log.contains("could not serve access token with a DPoP proof for POST \(p.issuer)/token"), "\(log)")
        // The same rule on the laptop itself.
        let local = try box.signin("dpop-proof", "--method", "POST", "--url", p.issuer + "/token")
        #expect(local.status == 2 && local.stderr.contains("never given out"), "\(local.stderr)")
    }

    /// a DPoP-bound access token never leaves as a bearer token: userinfo is asked with `Authorization: DPoP`
    /// and a proof (so the profile is there after sign-in, not silently empty), and the bridges whose protocols can
    /// carry only a bearer token refuse it, saying why (exit 2), while `token --json` says `DPoP`.
    @Test func aDPoPBoundTokenGoesWithAProofOrIsRefusedNeverAsABearer() throws {
        let p = try DPoPTests.offered.get()
        let box = try p.sandbox(["id_token_without_profile": true], extra: ["git_hosts": ["git.example.org"], "docker_registries": ["registry.example.org"]])
        let login = try box.signin("login")
        #expect(login.status == 0 && login.stdout.contains("Alice Example <alice@example.org>"), "the profile came from userinfo, with a proof: \(login.stdout) \(login.stderr)")
        #expect(try p.stats(box.clientID)["userinfo_ok"] as? Int == 1)
        #expect(try box.signin("token", "--json").stdout.contains(#""token_type":"DPoP""#))
        let kubectl = try box.signin("kubectl-credential", "--token", "access")
        #expect(kubectl.status == 2 && kubectl.stderr.contains("can carry only a bearer token") && kubectl.stdout.isEmpty, "\(kubectl.stderr)")
        let git = try box.signin(["git-credential", "get"], stdin: Data("protocol=https\nhost=git.example.org\n\n".utf8))
        #expect(git.status == 2 && git.stderr.contains("DPoP") && !git.stdout.contains("password="), "\(git.stdout) \(git.stderr)")
        let docker = try box.signin(["docker-credential", "get"], stdin: Data("registry.example.org\n".utf8))
        #expect(docker.status == 2 && !docker.stdout.contains("Secret"), "\(docker.stdout) \(docker.stderr)")
        // The ID token is no access token: kubectl gets it as ever.
        #expect(try box.signin("kubectl-credential").status == 0)
    }
}
