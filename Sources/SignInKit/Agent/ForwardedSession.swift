import SignInBase
import SignInProtocol
import SignInTransport
import FoundationEssentials

/// A forwarded session (`signin ssh`) and its policy: what the remote side may ask of the agent, decided here and
/// nowhere else. The agent (`TokenAgent`) routes a request on a session's socket to `admit`, then to the one token
/// path (`SignInClient.token`), which decides the rest (the principal the admitted chain names, DPoP proof targets,
/// the scope rule) as it does for every consumer.
///
/// 1. The configuration: the session's only (another is refused).
/// 2. The account: one of the session's (by e-mail or `sub`; none named: its first).
/// 3. A service-account chain the remote side names: only one `signin ssh --impersonate-service-account` named.
///    Naming none (`.configured`) is answered as `signin token` is on the laptop: its configuration decides.
/// 4. Restricted to APIs (`--audience`, `--resource`): only the person's access tokens for them, decided over the
///    whole request (kind, principal, federation, audience and resource each as given; nothing else).
/// 5. A refresh the remote side chooses: at most once per `chosenRefreshSeconds` (`mayChooseRefresh`).
/// 6. With `confirm`: each new `approvalKey` is put to the person first (the agent asks).
struct ForwardedSession {
    let id: String
    let socket: String
    let profile: String?
    /// Allowed accounts: `sub`s, and the e-mails they were named by.
    let subjects: [String]
    let names: [String]
    /// Service-account chains that may be asked for (each joined by commas).
    let chains: Set<String>
    /// When either is not empty, the only tokens served: access tokens exchanged for one of `audiences`, or for
    /// one of `resources` alone (`signin ssh --audience`, `--resource`).
    var audiences: Set<String> = []
    var resources: Set<String> = []
    var restrictedToAPIs: Bool { !audiences.isEmpty || !resources.isEmpty }
    let expiresAt: Date?
    let owner: PeerCredentials?
    /// Readable once the process that opened the session has ended (-1: none could be had).
    let ownerPidFD: Int32
    let ownerStart: String?
    let confirm: Bool
    let askpass: String?
    let host: String
    let createdAt: Date
    var approved: Set<String> = []
    var served = 0
    /// When (monotonic) the remote side last chose a refresh.
    var lastChosenRefresh: Double?
    /// Why it ended (its time, `signin lock`), while `signin ssh` still runs: its socket stays and says so, so
    /// the remote side hears it in signin's words (not ssh's "connect to ... failed" on each use).
    var ended: String?

    /// How often a forwarded session may choose a refresh.
    static let chosenRefreshSeconds = 30.0

    /// What `admit` decided.
    enum Admission {
        /// The request as the token path is to answer it (its account one of the session's).
        case admitted(TokenRequest)
        /// Refused: what the log says after the token's kind, and what the remote side is told.
        case refused(logged: String, message: String)
    }

    /// Steps 1 to 4 for `request` of configuration `asked`.
    func admit(_ request: TokenRequest, profile asked: String?) -> Admission {
        var r = request
        if let asked, asked != profile {
            return .refused(logged: "of configuration \(asked) (not forwarded)",
                            message: "configuration \(asked) is not forwarded to this machine (forwarded: \(profile ?? "the default one"))")
        }
        if let account = r.account {
            guard let i = names.firstIndex(where: { $0.lowercased() == account.lowercased() }) ?? subjects.firstIndex(of: account) else {
                return .refused(logged: "for \(account) (not forwarded)",
                                message: "\(account) is not forwarded to this machine (forwarded: \(names.joined(separator: ", ")))")
            }
            r.account = subjects[i]
        } else {
            r.account = subjects.first
        }
        let chain = r.serviceAccountChain.joined(separator: ",")
        if !chain.isEmpty && !chains.contains(chain) {
            return .refused(logged: "(impersonation not forwarded)",
                            message: "impersonating \(chain) is not forwarded to this machine (on the laptop: signin ssh --impersonate-service-account \(chain) ...)")
        }
        if restrictedToAPIs {
            // Decided over the whole request: the kind, whose token, federation and the target, each as given to the
            // session; anything else (an ID token, a service account, the configuration's chain, Google Cloud, an API
            // pair the session was not given) is refused, never answered with something wider.
            let apis = (audiences.sorted().map { "--audience \($0)" } + resources.sorted().map { "--resource \($0)" }).joined(separator: ", ")
            let only = "this forwarded session gives only access tokens for \(apis)"
            guard r.kind == .access else {
                return .refused(logged: "(an ID token: the session is restricted to APIs)", message: only + ", never an ID token")
            }
            switch r.principal {
            case .serviceAccount:
                return .refused(logged: "(a service account: the session is restricted to APIs)", message: only + ", never a service account's")
            case .configured, .person:
                // The person's token for the API: the configuration's impersonation chain is not what was given.
                r.principal = .person
            }
            // A family's token (Google Cloud's, say) is not one of the APIs given.
            let family = r.familyName
            guard family.isEmpty else {
                return .refused(logged: "(a token\(family): the session is restricted to APIs)", message: only + ", never a token" + family)
            }
            guard r.audience != nil || r.resource != nil,
                  r.audience.map({ audiences.contains($0) }) ?? true,
                  r.resource.map({ resources.contains($0) }) ?? true else {
                return .refused(logged: "(not one of the forwarded APIs)", message: only)
            }
        }
        return .admitted(r)
    }

    /// Step 5: nil when a refresh chosen `now` (monotonic seconds) may go (and it is counted), else how long ago the
    /// last one went and the seconds to wait.
    mutating func mayChooseRefresh(now: Double) -> (ago: Int, wait: Int)? {
        if let last = lastChosenRefresh, now - last < Self.chosenRefreshSeconds {
            return (Int(now - last), Int(Self.chosenRefreshSeconds - (now - last)) + 1)
        }
        lastChosenRefresh = now
        return nil
    }

    /// Step 6's key: what a person approves once, the whole request but its freshness (kind, account, principal,
    /// the families' parts such as federation, audience, API, scopes, e-mail claim, proof target), so an approval of one token never covers another.
    static func approvalKey(_ r: TokenRequest) -> String {
        let principal: String
        switch r.principal {
        case .configured: principal = "configured"
        case .person: principal = "person"
        case .serviceAccount(let chain): principal = "sa:" + chain.joined(separator: ",")
        }
        let parts: [String] = [
            "\(r.kind)", r.account ?? "", principal,
        ] + r.familyApprovalParts + [
            r.audience ?? "", r.resource ?? "", r.scopes?.joined(separator: " ") ?? "", r.includeEmail ? "" : "no-email",
            r.proofFor.map { "\($0.method) \($0.url)" } ?? "",
        ]
        // A separator no field holds: one request cannot be spelled as another.
        return parts.joined(separator: "\u{1}")
    }

    /// "access token", "ID token of service account SA", "access token for Google Cloud", "access token for the API
    /// R": for the log and the questions, naming what is served.
    static func kindName(_ r: TokenRequest) -> String {
        var name = r.kind == .id ? "ID token" : "access token"
        if let sa = r.serviceAccountChain.last { name += " of service account \(sa)" }
        name += r.familyName
        if let a = r.audience { name += " for audience \(a.withoutControlCharacters)" }
        if let res = r.resource { name += " for the API \(res.withoutControlCharacters)" }
        return name
    }

    /// As `signin agent --list` and the session's hello show it.
    var info: AgentProtocol.SessionInfo {
        AgentProtocol.SessionInfo(id: id, host: host, accounts: names, profile: profile, impersonate: chains.sorted(), audiences: audiences.sorted(),
                                  resources: resources.sorted(), expiresAt: expiresAt.map { Int($0.timeIntervalSince1970) }, confirm: confirm,
                                  served: served, createdAt: Int(createdAt.timeIntervalSince1970))
    }
}
