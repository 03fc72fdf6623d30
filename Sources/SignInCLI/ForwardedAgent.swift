import FoundationEssentials
import SignInKit

/// What the commands that neither hand out tokens nor sign in say on a machine reached with `signin ssh`, where
/// `SIGNIN_AGENT_SOCK` names the forwarded agent and there is no configuration and no store: what the agent
/// offers (who, from the forwarded ID token; the session's accounts and limits), and that signing in and out
/// happen on the machine the session came from.
enum ForwardedAgent {
    /// The forwarded agent this run asks (`SIGNIN_AGENT_SOCK`), unless it names a configuration here on purpose: the
    /// session's rule (`SignInSession.forwardedAgentSocket`), for a command's initialiser that decides by it.
    static func socket(_ a: Arguments, _ env: [String: String]) -> String? {
        SignInSession(environment: env, configurationOption: a.value(.config), profileOption: a.value(.profile)).forwardedAgentSocket
    }

    /// `signin whoami` through the agent: the profile in the forwarded ID token (verified on the laptop).
    static func whoami(_ agent: AgentTokens, json: Bool) throws(SignInError) -> ExitCode? {
        let io = agent.io
        if agent.isOwnAgent { return nil }
        let issued = try agent.token(.id, Freshness(minTTL: 0))
        guard let profile = SignInProfile(forwardedIDToken: issued.token.value) else {
            throw .noPreviousSignIn(reason: .agentRefused(reason: "its ID token holds no profile"))
        }
        if json {
            io.out(JSONText.object(["signed_in": .bool(true), "profile": JSONText.profile(profile), "through_agent": .string(agent.agent.socketPath)]))
        } else {
            io.out(profile.displayName)
        }
        return .success
    }

    /// `signin status` through the agent: the forwarded session, its accounts and its limits.
    static func status(_ agent: AgentTokens, json: Bool) throws(SignInError) -> ExitCode? {
        let io = agent.io
        if agent.isOwnAgent { return nil }
        let session = try agent.hello().session
        if json {
            io.out(JSONText.object(["through_agent": .string(agent.agent.socketPath), "session": session?.json ?? .null]))
            return .success
        }
        var lines = ["Through the agent forwarded with `signin ssh` (SIGNIN_AGENT_SOCK=\(agent.agent.socketPath)); this machine keeps no grant."]
        if let s = session {
            lines.append("Accounts: " + (s.accounts.isEmpty ? "none" : s.accounts.joined(separator: ", ")))
            if let p = s.profile { lines.append("Configuration: \(p) (on the laptop)") }
            if !s.impersonate.isEmpty { lines.append("Service accounts: " + s.impersonate.joined(separator: "; ")) }
            if !s.audiences.isEmpty || !s.resources.isEmpty {
                lines.append("Only tokens for: " + (s.audiences.map { "--audience \($0)" } + s.resources.map { "--resource \($0)" }).joined(separator: ", "))
            }
            lines.append("Until: " + (s.expiresAt.map { iso8601(Date(timeIntervalSince1970: TimeInterval($0))) } ?? "the end of the SSH session"))
            if s.confirm { lines.append("Each new account or token kind is confirmed on the laptop.") }
        } else {
            lines.append("The agent's own socket: every account of every configuration it serves.")
        }
        lines.append(laptopOnly)
        io.out(lines.joined(separator: "\n"))
        return .success
    }

    /// `signin accounts` through the agent: the accounts the session forwards.
    static func accounts(_ agent: AgentTokens, json: Bool) throws(SignInError) -> ExitCode? {
        let io = agent.io
        if agent.isOwnAgent { return nil }
        let accounts = try agent.hello().session?.accounts ?? []
        if json {
            io.out(JSONText.render(.array(accounts.map { .object(["account": .string($0), "through_agent": .bool(true)]) })))
        } else if accounts.isEmpty {
            io.out("The agent's own socket serves every account stored where it runs (`signin accounts` there lists them).")
        } else {
            for (i, a) in accounts.enumerated() { io.out((i == 0 ? "* " : "  ") + a + "  (forwarded)") }
        }
        return .success
    }

    static let laptopOnly = "Signing in and out happens on the machine the session came from (`signin login` there); unset SIGNIN_AGENT_SOCK to use a sign-in of this machine's own."

    /// `login`, `logout`, `use` through a forwarded agent: nothing to do here, and where to do it (through this
    /// machine's own agent they run as usual: nil).
    static func refuse(_ command: String, _ agent: AgentTokens) throws(SignInError) -> ExitCode? {
        if agent.isOwnAgent { return nil }
        throw .unsupported(reason: "`signin \(command)` acts on a grant, and this machine has none: it uses the agent forwarded with `signin ssh` (SIGNIN_AGENT_SOCK). " + laptopOnly)
    }
}
