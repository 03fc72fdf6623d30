import SignInKit

#if canImport(Glibc)
import Glibc
#endif

/// `signin use ACCOUNT`: make another account current.
struct Use: SignInCommand {
    static let spec = CommandSpec(of: Self.self, options: [], summary: "Make ACCOUNT the current account",
                                  details: "Makes ACCOUNT (an e-mail or sub) the current account of this configuration. ACCOUNT may be an API signed in to from its address (its URL): with no configured provider, plain commands then answer for it.", usageTail: " ACCOUNT",
                                  takesArguments: true)

    let account: String

    func run(_ r: CommandRun) throws -> ExitCode {
        if let agent = r.agent, let answered = try run(through: agent) { return answered }
        if let answered = try chooseAPI(r.environment, r.io) { return answered }
        return try run(in: r.context())
    }

    /// Through a forwarded agent there is no grant here to act on: where to do it instead.
    func run(through agent: AgentTokens) throws(SignInError) -> ExitCode? { try ForwardedAgent.refuse(Self.name, agent) }

    init(_ a: Arguments, _ env: [String: String]) throws(UsageError) {
        guard a.positional.count == 1 else { throw UsageError("`signin use` takes one ACCOUNT (an e-mail or sub); see `signin accounts`") }
        account = a.positional[0]
    }

    /// `use URL` for an API signed in to from its address: the API plain commands answer for with no provider configured.
    func chooseAPI(_ env: [String: String], _ io: IOStreams) throws(UsageError) -> ExitCode? {
        guard SignInConfiguration.isValidResource(account), account.contains("://") else { return nil }
        let store = CredentialStore(directory: CredentialStore.defaultDirectory(environment: env))
        guard ((try? store.apiResources()) ?? []).contains(account) else { return nil }
        do throws(SignInError) {
            try store.setCurrentAPI(account)
        } catch {
            io.err("signin: \(error.description)")
            return ExitCode(error)
        }
        io.out("Now using the API \(account.withoutControlCharacters)")
        return .success
    }

    func run(in c: Context) throws(SignInError) -> ExitCode {
        let io = c.io
        let user = try c.client.switchAccount(to: account)
        if c.json { io.out(JSONText.object(JSONText.user(user))) } else { io.out("Now using \(user.profile.displayName)") }
        return .success
    }
}
