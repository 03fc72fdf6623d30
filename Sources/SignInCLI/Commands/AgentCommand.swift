import FoundationEssentials
import SignInKit

#if canImport(Glibc)
import Glibc
#endif

/// `signin agent [--list | --stop]`: the per-user agent that serves tokens on a Unix socket (and the sessions
/// `signin ssh` forwards).
///
/// 1. `--list`: the forwarded sessions of the running agent and their limits; `--stop`: it ends. No agent: exit 3.
/// 2. Otherwise an agent already answering on the socket is left alone (exit 0, saying so); else this process
///    becomes the agent on `$XDG_RUNTIME_DIR/signin/agent.sock`, prints `SIGNIN_AGENT_SOCK=...` and serves until
///    SIGINT, SIGTERM, SIGHUP or `--stop`, then removes its sockets.
struct AgentCommand: SignInCommand {
    static let listOption = OptionSpec("--list", "List the sessions forwarded with `signin ssh` and their limits")
    static let stopOption = OptionSpec("--stop", "Stop the running agent")
    static let spec = CommandSpec(
        of: Self.self, options: [AgentCommand.listOption, AgentCommand.stopOption, .json], summary: "Serve tokens to your own processes on a Unix socket, and to SSH sessions you forward",
        details: """
            Runs the agent: the same token path as `signin token`, on $XDG_RUNTIME_DIR/signin/agent.sock (0600, in a
            0700 folder), answering only your own uid. `signin ssh` starts one when none runs and forwards a socket
            of its own, restricted to the accounts and time it names. It hands out access and ID tokens only,
            never a refresh token. Served requests of forwarded sessions are logged to
            $XDG_STATE_HOME/signin/agent.log (never a token).
            """,
        readsConfiguration: false)

    let list: Bool
    let stop: Bool
    let json: Bool
    /// How this run was asked for, for an error's advice.
    let invocation: Invocation

    init(_ a: Arguments, _ env: [String: String]) throws(UsageError) {
        invocation = Invocation(Arguments(), env, command: Self.name)
        list = a.has(Self.listOption)
        stop = a.has(Self.stopOption)
        json = a.has(.json)
        if list && stop { throw UsageError("--list and --stop ask for two things; give one") }
    }

    func run(_ r: CommandRun) throws -> ExitCode { run(r.environment, r.io) }

    /// The agent's run with `env`'s sockets, its text to `io`.
    func run(_ env: [String: String], _ io: IOStreams) -> ExitCode {
        let agent = AgentClient(agentOf: env)
        do throws(SignInError) {
            if list { return try Self.list(agent, json: json, io) }
            if stop {
                _ = try agent.request("POST", AgentProtocol.Path.stop)
                io.err("signin: the agent on \(agent.socketPath) is stopping.")
                return .success
            }
            return try serve(env, io)
        } catch {
            // With --json, an error is a JSON object on standard output too, as every command answers one.
            return CLI.fail(error, json: json, invocation, io)
        }
    }

    static func list(_ agent: AgentClient, json: Bool, _ io: IOStreams) throws(SignInError) -> ExitCode {
        let a = try agent.request("GET", AgentProtocol.Path.sessions)
        let sessions = (a.object[AgentProtocol.Key.sessions]?.array ?? []).compactMap { $0.object.flatMap(AgentProtocol.SessionInfo.init(json:)) }
        if json {
            io.out(JSONText.object([AgentProtocol.Key.sessions: .array(sessions.map(\.json))]))
            return .success
        }
        if sessions.isEmpty { io.out("No forwarded sessions (agent on \(agent.socketPath)).") }
        for s in sessions {
            let until = s.expiresAt.map { iso8601(Date(timeIntervalSince1970: TimeInterval($0))) } ?? "the end of the SSH session"
            let only = s.audiences.isEmpty && s.resources.isEmpty ? "" : "  only " + (s.audiences + s.resources).joined(separator: ", ")
            io.out("\(s.id)  \(s.host)  \(s.accounts.joined(separator: ", "))  until \(until)" + (s.confirm ? "  confirm" : "") + only + "  served \(s.served)")
        }
        return .success
    }

    private func serve(_ env: [String: String], _ io: IOStreams) throws(SignInError) -> ExitCode {
        let path = AgentProtocol.socketPath(environment: env)
        switch AgentClient(agentOf: env).servesStore(of: env) {
        case true?:
            io.err("signin: an agent already runs on \(path).")
            return .success
        case false?:
            throw .system(reason: "an agent for another store (another HOME or data folder) runs on \(path); stop it with `signin agent --stop` in its environment, or set XDG_RUNTIME_DIR")
        case nil: break
        }
        var agent: TokenAgent?
        return try ServerLife.untilStopSignal(start: { () throws(SignInError) in
            let started = try TokenAgent(environment: env) { (profile) throws(SignInError) -> SignInClient in
                // A session of `signin ssh -c FILE` names the file itself (an absolute path); any other a configuration.
                let isPath = profile?.hasPrefix("/") == true
                let file = SignInConfiguration.defaultPath(explicit: isPath ? profile : nil, profile: isPath ? nil : profile, environment: env)
                return SignInClient(configuration: try SignInConfiguration.load(path: file), environment: env)
            }
            agent = started
            started.start { Posix.kill(Posix.getpid(), SIGTERM) }  // --stop ends the serving thread: wake the wait
        }, announce: {
            guard let agent else { return }
            io.out("SIGNIN_AGENT_SOCK=\(agent.socketPath); export SIGNIN_AGENT_SOCK;")
            io.err("signin: agent on \(agent.socketPath); stop it with Ctrl-C or `signin agent --stop`.")
        }, stop: { agent?.stop() })
    }
}
