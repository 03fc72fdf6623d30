import Dispatch
import FoundationEssentials
import SignInKit

#if canImport(Glibc)
import Glibc
#endif

/// `signin ssh [--account A]... [-c FILE | --profile P] [--for DURATION] [--confirm] [SSH OPTIONS...] [--] DESTINATION [COMMAND...]`:
/// the system `ssh`, with a socket of the agent forwarded that hands out this laptop's tokens, restricted.
///
/// 1. The agent: the running one, else one started now (detached), waited for until it answers.
/// 2. A forwarded session is asked of it: the accounts named (default: the current one) of one configuration,
///    until `--for` passes or this process ends, each new request confirmed through `$SIGNIN_ASKPASS` (or
///    `$SSH_ASKPASS`) with `--confirm`. An account that is not signed in here: the error, before ssh runs.
/// 3. ssh runs with `-R REMOTE:SESSION_SOCKET` (the remote socket 0600, `StreamLocalBindUnlink`,
///    `ExitOnForwardFailure`), and on the remote side `SIGNIN_AGENT_SOCK` names it (moved into the remote
///    `$XDG_RUNTIME_DIR` when there is one) for COMMAND or the login shell, and it is removed when they end.
/// 4. Signals go on to ssh; when it ends the session ends (its socket removed here), and signin exits with ssh's status.
struct SSHCommand: SignInCommand {
    static let accountOption = OptionSpec("--account", value: "ACCOUNT", "An account to forward (again for more; default: the current one)")
    static let forOption = OptionSpec("--for", value: "DURATION", "End the forwarding after this long (90s, 10m, 8h, 1d; default: the SSH session)")
    static let confirmOption = OptionSpec("--confirm", "Ask here (through $SIGNIN_ASKPASS or $SSH_ASKPASS) before each new account or token kind is served")
    static let audienceOption = OptionSpec("--audience", value: "AUDIENCE", "Forward only tokens exchanged for this audience (RFC 8693; again for more)")
    static let resourceOption = OptionSpec("--resource", value: "URI", check: .resourceIndicator, "Forward only tokens for this API (RFC 8707, one of the configuration's resources; again for more)")
    static let spec = CommandSpec(
        of: Self.self, options: [SSHCommand.accountOption, .config, .profile, SSHCommand.forOption, SSHCommand.confirmOption] + Impersonation.options + [SSHCommand.audienceOption, SSHCommand.resourceOption], summary: "ssh with your tokens forwarded: the remote side gets access and ID tokens, never the grant",
        details: """
            Runs the system ssh with a socket of signin's agent forwarded, restricted to the accounts named (default:
            the current one) of one configuration, for --for (default: the SSH session). On the remote machine,
            `signin token`, `id-token`, `exec`, `git-credential`, `kubectl-credential` and `docker-credential` use it
            through SIGNIN_AGENT_SOCK, with no configuration and no store there; refused or gone, they exit 3 and
            never open a browser. ssh's own options follow signin's; as with ssh, `--` ends the options and the word
            after it is the destination, whatever it starts with. See `signin agent --list`. With --audience or
            --resource, the remote side gets only access tokens for those APIs: not the grant's own access token,
            not an ID token.
            """,
        usageTail: " [SSH OPTIONS...] [--] DESTINATION [COMMAND...]",
        readsConfiguration: false, takesJSON: false, takesArguments: true, takesCommand: true, passesUnknownOptions: true)

    let accounts: [String]
    let profile: String?
    let seconds: Int?
    let confirm: Bool
    let sshArguments: [String]
    let destinationIndex: Int
    /// A service-account chain the remote side may ask for (`--impersonate-service-account`).
    let chain: [String]?
    /// The only APIs the remote side may get tokens for (`--audience`, `--resource`); none: no such restriction.
    let audiences: [String]
    let resources: [String]

    init(_ a: Arguments, _ env: [String: String]) throws(UsageError) {
        accounts = a.all(Self.accountOption).flatMap { $0.split(separator: ",").map { $0.trimmingWhitespace } }.filter { !$0.isEmpty }
        // -c FILE is signin's, as for every command that reads a configuration (ssh's cipher option is -c too: give
        // it as `-o Ciphers=...`). The agent is told the file's absolute path.
        try a.checkOneConfiguration()
        profile = a.value(.config).map { ProcessEnvironment.absolute($0) } ?? a.value(.profile)
        seconds = try a.value(Self.forOption).map { v throws(UsageError) -> Int in
            guard let s = Self.seconds(v) else { throw UsageError("--for \"\(v)\" is not a duration (90s, 10m, 8h, 1d, or seconds)") }
            return s
        }
        confirm = a.has(Self.confirmOption)
        chain = Impersonation(a).chain
        audiences = a.all(Self.audienceOption)
        resources = a.all(Self.resourceOption)
        sshArguments = a.rest
        // After signin's own `--` comes the destination, as after ssh's: a host name from a variable is never read
        // as an option.
        guard let d = a.restAfterSeparator ? (a.rest.isEmpty ? nil : 0) : Self.destination(in: a.rest) else {
            throw UsageError("`signin ssh` needs a destination: signin ssh [--account A] [--for 1h] [SSH OPTIONS...] [--] DESTINATION [COMMAND...]")
        }
        destinationIndex = d
        // ssh would read a destination that starts with "-" as an option (-oProxyCommand=... runs a command here).
        if a.rest[d].hasPrefix("-") { throw UsageError("\"\(a.rest[d].withoutControlCharacters)\" is not a destination (it starts with \"-\")") }
        if audiences.contains(where: { $0.isEmpty || $0.unicodeScalars.contains(where: { $0 == "\n" || $0 == "\r" }) }) { throw UsageError("--audience needs a value (whom the tokens are for)") }
        if confirm && (env["SIGNIN_ASKPASS"] ?? env["SSH_ASKPASS"] ?? "").isEmpty {
            throw UsageError("--confirm asks through a program: set SIGNIN_ASKPASS (or SSH_ASKPASS) to one that shows the question and exits 0 for yes (ssh-askpass does)")
        }
    }

    /// "90", "90s", "10m", "8h", "1d".
    static func seconds(_ v: String) -> Int? {
        let units: [Character: Int] = ["s": 1, "m": 60, "h": 3600, "d": 86400]
        if let n = Int(v), n > 0 { return n }
        guard let unit = v.last, let factor = units[unit], let n = Int(v.dropLast()), n > 0 else { return nil }
        return n * factor
    }

    /// Where ssh's destination is among its arguments: the first word that is not an option or an option's value.
    static func destination(in args: [String]) -> Int? {
        let takesValue = Set("BbcDEeFIiJLlmOoPpQRSWw")
        var i = 0
        while i < args.count {
            let w = args[i]
            if w == "--" { return i + 1 < args.count ? i + 1 : nil }
            guard w.hasPrefix("-"), w.count > 1 else { return i }
            // -p 22 or -p22; flags may be grouped (-tt, -vA): a value-taking letter last takes the next word.
            let letters = w.dropFirst()
            if let k = letters.firstIndex(where: { takesValue.contains($0) }) {
                i += letters.index(after: k) == letters.endIndex ? 2 : 1
            } else {
                i += 1
            }
        }
        return nil
    }

    func run(_ r: CommandRun) throws -> ExitCode {
        let io = r.io
        do throws(SignInError) {
            return try run(r.environment, io)
        } catch {
            io.err("signin: \(error.description)")
            return ExitCode(error)
        }
    }

    private func run(_ env: [String: String], _ io: IOStreams) throws(SignInError) -> ExitCode {
        let agent = try Self.runningAgent(env)
        var asked = AgentProtocol.SessionRequest(host: sshArguments[destinationIndex])
        asked.accounts = accounts
        asked.profile = profile
        asked.seconds = seconds
        asked.chains = chain.map { [$0] } ?? []
        asked.audiences = audiences
        asked.resources = resources
        if confirm { asked.askpass = env["SIGNIN_ASKPASS"].flatMap { $0.isEmpty ? nil : $0 } ?? env["SSH_ASKPASS"] ?? "" }
        let answer = try agent.request("POST", AgentProtocol.Path.sessions + "?" + FormEncoding.encode(asked.query))
        guard answer.status == 200, let created = AgentProtocol.SessionCreated(json: answer.object) else {
            let refusal = AgentProtocol.Failure(json: answer.object, status: answer.status)
            throw .noPreviousSignIn(reason: .agentRefused(reason: refusal.message ?? "the agent would not forward (HTTP \(answer.status))"))
        }
        let (id, local) = (created.id, created.socket)
        // The session ends with ssh, before signin ends (perhaps by ssh's signal, which skips any defer); on an error
        // before that, on the way out. (The agent also notices this process's end by itself, within a second.)
        var open = true
        func endSession() {
            if open { _ = try? agent.request("DELETE", AgentProtocol.Path.session(id)) }
            open = false
        }
        defer { endSession() }
        guard let ssh = ExecutableSearch.locate("ssh", environment: env) else {
            throw .unsupported(reason: "no ssh on PATH (Debian: openssh-client)")
        }
        let remote = "/tmp/signin-agent-\(id).sock"
        var argv = ["ssh", "-R", "\(remote):\(local)", "-o", "StreamLocalBindUnlink=yes", "-o", "ExitOnForwardFailure=yes"]
        let before = Array(sshArguments[..<destinationIndex]).filter { $0 != "--" }
        let command = Array(sshArguments[(destinationIndex + 1)...])
        if command.isEmpty && !before.contains(where: { $0.hasPrefix("-T") }) { argv.append("-t") }
        argv += before + ["--", sshArguments[destinationIndex], Self.remoteCommand(socket: remote, command: command)]
        return try ServerLife.running(argv, at: ssh, environment: env, started: {
            guard let seconds else { return }
            // Said once, here, when the time is up (the remote side hears it from the session's socket on each use).
            // Started after the signals are blocked: the timer's thread must not take them.
            let host = sshArguments[destinationIndex].withoutControlCharacters
            DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(seconds)) {
                io.err("signin: the tokens forwarded to \(host) ended (--for \(seconds) s is up); the SSH session goes on without them.")
            }
        }, ended: { endSession() }, cannotStart: { (e) throws(SignInError) -> ExitCode in throw .system(reason: "cannot run ssh: \(e)") })
    }

    /// What the remote shell runs: the socket moved into the remote user's runtime folder where there is one,
    /// named in `SIGNIN_AGENT_SOCK` for COMMAND (as ssh would run it) or a login shell, and removed after.
    static func remoteCommand(socket: String, command: [String]) -> String {
        let name = PathName(path: socket).lastComponent
        let setup = "s=\(socket); if [ -n \"$XDG_RUNTIME_DIR\" ] && [ -d \"$XDG_RUNTIME_DIR\" ] && mv \"$s\" \"$XDG_RUNTIME_DIR/\(name)\" 2>/dev/null; then s=\"$XDG_RUNTIME_DIR/\(name)\"; fi; "
            + "SIGNIN_AGENT_SOCK=\"$s\"; export SIGNIN_AGENT_SOCK; "
        let run = command.isEmpty ? "\"${SHELL:-/bin/sh}\" -l" : command.joined(separator: " ")
        return setup + run + "; r=$?; rm -f \"$s\"; exit $r"
    }

    /// This store's running agent, or one started now (detached from this terminal) and waited for. Its folder
    /// must be this user's alone and its listener this user's (another user may have taken `/tmp/signin-UID`),
    /// and it must serve this environment's store (not an agent started under another HOME).
    static func runningAgent(_ env: [String: String]) throws(SignInError) -> AgentClient {
        var agent = AgentClient(agentOf: env)
        agent.timeoutSeconds = 300
        if let problem = AgentProtocol.folderProblem(AgentProtocol.folder(environment: env)) {
            throw .system(reason: "the agent's folder cannot be trusted: \(problem)")
        }
        switch agent.servesStore(of: env) {
        case true?: return agent
        case false?: throw .system(reason: "the agent on \(agent.socketPath) serves another store (another HOME or data folder); stop it with `signin agent --stop` in its environment, or set XDG_RUNTIME_DIR")
        case nil: break
        }
        let me = DynamicSibling.frontPath ?? "signin"
        switch ChildProcess.spawnDetached(path: me, argv: [me, "agent"], environment: env) {
        case .success: break
        case .failure(let f): throw .system(reason: "cannot start the agent: \(f.error)")
        }
        let deadline = MonotonicClock.now() + 10
        while MonotonicClock.now() < deadline {
            if agent.servesStore(of: env) == true { return agent }
            Posix.usleep(10_000)  // the agent's socket appears when it is ready; nothing to wait on but the socket itself
        }
        throw .system(reason: "the agent did not start on \(agent.socketPath) within 10 s; run `signin agent` to see why")
    }
}
