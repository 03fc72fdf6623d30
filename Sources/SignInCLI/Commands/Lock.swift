import SignInKit

#if canImport(Glibc)
import Glibc
#endif

/// `signin lock`: the kernel keyring forgets the unlocked store key.
struct Lock: SignInCommand {
    static let spec = CommandSpec(of: Self.self, options: [], summary: "Forget the unlocked store key (the kernel keyring's copy) until the next unlock",
                                  details: "Drops the unlocked store key from the kernel keyring. The next command unlocks it again\n(the Secret Service, or the passphrase). A running agent ends every session forwarded with `signin ssh`.")

    init(_ a: Arguments, _ env: [String: String]) throws(UsageError) {}

    func run(_ r: CommandRun) throws -> ExitCode {
        return try run(in: r.context())
    }

    /// `signin lock`: the kernel keyring forgets the unlocked key.
    func run(in c: Context) throws(SignInError) -> ExitCode {
        let io = c.io
        let dropped = c.client.fileStore.lock()
        // What was forwarded over SSH ends too (the agent, if one runs, says so).
        // Only this store's own agent is told (and believed): a socket another user or store planted is not ours.
        let agent = AgentClient(agentOf: c.environment)
        let forwardedEnded = agent.servesStore(of: c.environment) == true && (try? agent.request("POST", AgentProtocol.Path.lock))?.status == 200
        if c.json { io.out(JSONText.object(["locked": .bool(dropped), "forwarded_sessions_ended": .bool(forwardedEnded)])) } else {
            io.out(dropped ? "Locked: the next command unlocks the store key again." : "Nothing to lock (no unlocked key is held for this store).")
            if forwardedEnded { io.out("The agent ended every session forwarded with `signin ssh`.") }
        }
        return .success
    }
}
