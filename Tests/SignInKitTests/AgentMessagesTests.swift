import Foundation
import Testing
@testable import SignInKit
@testable import SignInBase
@testable import SignInTransport
@testable import SignInProtocol
@testable import SignInStorage

/// The agent protocol's answers, typed: what one end encodes the other reads back the same, and each refusal is
/// the error a remote command reports.
@Suite struct AgentMessagesTests {
    func roundTrip(_ out: JSONValueOut) -> [String: JSONValue] {
        JSONValue.object(from: Data(out.text.utf8)) ?? [:]
    }

    @Test func aTokenAnswerRoundTripsAndRefusesWhatIsNoToken() {
        let answers = [
            AgentProtocol.TokenAnswer(token: "at-1", expiresAt: 2_000_000_000, account: "alice@example.org", subject: "alice", kind: .access, tokenType: "Bearer", dpopProof: nil),
            AgentProtocol.TokenAnswer(token: "eyJ.x.y", expiresAt: nil, account: "sa@p.iam.gserviceaccount.com", subject: "sa@p.iam.gserviceaccount.com", kind: .id, tokenType: "Bearer", dpopProof: nil),
            AgentProtocol.TokenAnswer(token: "at-2", expiresAt: 1, account: "a", subject: "a", kind: .access, tokenType: "DPoP", dpopProof: "eyJ.p.s"),
        ]
        for a in answers { #expect(AgentProtocol.TokenAnswer(json: roundTrip(a.json)) == a) }
        // A token with a line break (a header injection), an unknown type or kind: refused.
        var bad = answers[0]
        bad.token = "at-1\r\nX-Evil: 1"
        #expect(AgentProtocol.TokenAnswer(json: roundTrip(bad.json)) == nil)
        var o = roundTrip(answers[0].json)
        o["token_type"] = .string("MAC")
        #expect(AgentProtocol.TokenAnswer(json: o) == nil)
        o = roundTrip(answers[0].json)
        o["kind"] = .string("refresh")
        #expect(AgentProtocol.TokenAnswer(json: o) == nil)
    }

    /// A token request crosses the wire with each family's part encoded by that family (Google Cloud's
    /// `google_cloud`), service-account chains checked by the core's rule, and a wrong family value named.
    @Test func aTokenRequestCrossesWithTheFamiliesOwnParts() throws {
        var r = TokenRequest(kind: .access, minimumValidity: .seconds(120), forceRefresh: true, account: "alice@example.org")
        r.forGoogleCloud = true
        r.principal = .serviceAccount(chain: ["a@p.iam.gserviceaccount.com", "b@p.iam.gserviceaccount.com"])
        let query = AgentProtocol.query(r, profile: "work")
        #expect(query.contains { $0 == (GoogleCloudFamily.agentQueryKey, "1") })
        #expect(AgentProtocol.tokenRequestKeys.contains(GoogleCloudFamily.agentQueryKey))
        let fields = Dictionary(query, uniquingKeysWith: { $1 })
        let (back, profile) = try AgentProtocol.tokenRequest(fields).get()
        #expect(profile == "work" && back.forGoogleCloud && back.serviceAccountChain == r.serviceAccountChain && back.forceRefresh)
        var plain = fields
        plain[GoogleCloudFamily.agentQueryKey] = nil
        #expect(try AgentProtocol.tokenRequest(plain).get().0.forGoogleCloud == false)
        var wrong = fields
        wrong[GoogleCloudFamily.agentQueryKey] = "yes"
        guard case .failure(let e) = AgentProtocol.tokenRequest(wrong) else { Issue.record("google_cloud=yes accepted"); return }
        #expect(e.message.contains("google_cloud"))
        wrong = fields
        wrong[AgentProtocol.Key.chain] = "not-an-email"
        guard case .failure = AgentProtocol.tokenRequest(wrong) else { Issue.record("a chain of no e-mail accepted"); return }
    }

    @Test func everyFailureRoundTripsWithItsStatusAndBecomesTheLocalError() {
        for code in AgentProtocol.Failure.Code.allCases {
            let f = AgentProtocol.Failure(code, "because \(code.rawValue)", target: code == .targetRefused ? "https://api.example/" : nil,
                                          retryAfter: code == .tooMany ? 12 : nil)
            let status = Int(code.status.prefix(3))!
            #expect(AgentProtocol.Failure(json: roundTrip(f.json), status: status) == f, "\(code)")
            switch (code, f.error) {
            case (.unsupported, .unsupported), (.targetRefused, .targetRefused(_, "https://api.example/", _)), (.tooMany, .rateLimited(_, 12)): break
            case (.unsupported, _), (.targetRefused, _), (.tooMany, _): Issue.record("\(code) became \(f.error)")
            case (_, .noPreviousSignIn(.agentRefused)): break
            default: Issue.record("\(code) became \(f.error)")
            }
        }
        // A code this end does not know (a newer agent): a failure, never a crash; a 429 without a body is too many.
        #expect(AgentProtocol.Failure(json: ["error": .string("from_the_future")], status: 418).code == .failed)
        #expect(AgentProtocol.Failure(json: [:], status: 429).code == .tooMany)
        // What the agent says is shown without control characters.
        #expect(AgentProtocol.Failure(json: ["error": .string("refused"), "message": .string("no\u{1b}[2J")], status: 403).message == "no[2J")
    }

    @Test func theHelloAndASessionRoundTrip() {
        let session = AgentProtocol.SessionInfo(id: "0a1b", host: "devbox", accounts: ["alice@example.org"], profile: "corp", impersonate: ["sa@p.iam.gserviceaccount.com"],
                                                audiences: ["orders-api"], resources: ["https://orders.example.test/"], expiresAt: 2_000_000_000, confirm: true,
                                                served: 3, createdAt: 1_900_000_000)
        #expect(AgentProtocol.SessionInfo(json: roundTrip(session.json)) == session)
        let forwarded = AgentProtocol.Hello(signinVersion: "0.2.0", session: session, gitHosts: ["git.example.org"], dockerRegistries: ["*.pkg.dev"],
                                            familySettings: [AWSFamily.stsEndpointSetting: "https://sts.amazonaws.com",
                                                             GoogleCloudFamily.stsEndpointSetting: "https://sts.googleapis.com/v1/token",
                                                             GoogleCloudFamily.iamCredentialsEndpointSetting: "https://iamcredentials.googleapis.com"])
        #expect(AgentProtocol.Hello(json: roundTrip(forwarded.json)) == forwarded)
        let own = AgentProtocol.Hello(signinVersion: "0.2.0", store: "/home/a/.config/signin /home/a/.local/share/signin")
        #expect(AgentProtocol.Hello(json: roundTrip(own.json)) == own)
        // An endpoint that is not https (but on loopback) is not taken from an agent; a host with a terminal escape is shown without it.
        var o = roundTrip(forwarded.json)
        o["aws_sts_endpoint"] = .string("http://sts.example.com")
        #expect(AgentProtocol.Hello(json: o).familySettings[AWSFamily.stsEndpointSetting] == nil)
        var s = roundTrip(session.json)
        s["host"] = .string("dev\u{1b}]0;pwned\u{07}box")
        #expect(AgentProtocol.SessionInfo(json: s)?.host.contains("\u{1b}") == false)
    }

    @Test func aSessionRequestRoundTripsAndTheAgentRefusesWhatIsNone() throws {
        var asked = AgentProtocol.SessionRequest(host: "devbox")
        asked.accounts = ["alice@example.org", "bob@example.org"]
        asked.profile = "/home/a/corp.json"
        asked.seconds = 3600
        asked.chains = [["deleg@p.iam.gserviceaccount.com", "sa@p.iam.gserviceaccount.com"]]
        asked.audiences = ["orders-api"]
        asked.resources = ["https://orders.example.test/"]
        asked.askpass = "/usr/bin/ssh-askpass"
        let query = Dictionary(uniqueKeysWithValues: asked.query)
        #expect(try AgentProtocol.SessionRequest(query: query) == asked)
        #expect(try AgentProtocol.SessionRequest(query: ["host": "h"]) == AgentProtocol.SessionRequest(host: "h"))
        // Each key that is not what it says is refused by name, before any session exists.
        for (key, value, named) in [("profile", "../etc/x", "profile"), ("impersonate", "not-an-email", "impersonate"),
                                    ("resources", "relative/path", "resources"), ("seconds", "-5", "seconds")] {
            var bad = query
            bad[key] = value
            #expect(throws: AgentRequestError.self) { try AgentProtocol.SessionRequest(query: bad) }
            do { _ = try AgentProtocol.SessionRequest(query: bad) } catch { #expect(error.message.contains(named)) }
        }
        // A host with a terminal escape is kept without it (it is shown in the person's questions and the log).
        #expect(try AgentProtocol.SessionRequest(query: ["host": "dev\u{1b}[2Jbox"]).host == "dev[2Jbox")

        let created = AgentProtocol.SessionCreated(id: "0a1b2c3d", socket: "/run/user/1000/signin/fwd-0a1b2c3d.sock", expiresAt: 2_000_000_000)
        #expect(AgentProtocol.SessionCreated(json: roundTrip(created.json)) == created)
        var o = roundTrip(created.json)
        o["socket"] = .string("relative.sock")
        #expect(AgentProtocol.SessionCreated(json: o) == nil)
        o = roundTrip(created.json)
        o["id"] = .string("../x")
        #expect(AgentProtocol.SessionCreated(json: o) == nil)
    }

    @Test func aForwardedSessionAdmitsOnlyWhatItsSignInSSHForwarded() {
        var s = ForwardedSession(id: "0a", socket: "/tmp/x.sock", profile: "corp", subjects: ["sub-alice"], names: ["alice@example.org"],
                                 chains: ["sa@p.iam.gserviceaccount.com"], expiresAt: nil, owner: nil, ownerPidFD: -1, ownerStart: nil,
                                 confirm: false, askpass: nil, host: "devbox", createdAt: Date())
        func admitted(_ r: TokenRequest, profile: String? = "corp") -> TokenRequest? {
            if case .admitted(let a) = s.admit(r, profile: profile) { return a }
            return nil
        }
        // The session's account by e-mail (any case) or sub; none named: its first.
        #expect(admitted(TokenRequest(account: "ALICE@example.org"))?.account == "sub-alice")
        #expect(admitted(TokenRequest())?.account == "sub-alice")
        #expect(admitted(TokenRequest(account: "bob@example.org")) == nil)
        // Its configuration only.
        #expect(admitted(TokenRequest(), profile: "other") == nil)
        // Only the chain forwarded; no chain named is the laptop configuration's decision.
        #expect(admitted(TokenRequest(serviceAccountChain: ["sa@p.iam.gserviceaccount.com"])) != nil)
        #expect(admitted(TokenRequest(serviceAccountChain: ["other@p.iam.gserviceaccount.com"])) == nil)
        var configured = TokenRequest()
        configured.principal = .configured
        #expect(admitted(configured)?.principal == .configured)
        // Restricted to one API: only the person's access token for it.
        s.audiences = ["orders-api"]
        #expect(admitted(TokenRequest(audience: "orders-api")) != nil)
        #expect(admitted(TokenRequest(audience: "billing-api")) == nil)
        #expect(admitted(TokenRequest(kind: .id)) == nil)
        #expect(admitted(TokenRequest()) == nil)
        // A refresh the remote side chooses: once per interval.
        #expect(s.mayChooseRefresh(now: 100) == nil)
        #expect(s.mayChooseRefresh(now: 110)?.wait == 21)
        #expect(s.mayChooseRefresh(now: 110)?.ago == 10)
        #expect(s.mayChooseRefresh(now: 131) == nil)
    }
}
