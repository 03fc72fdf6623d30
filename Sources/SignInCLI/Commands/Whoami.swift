import SignInKit

/// `signin whoami`: the signed-in profile, from the store, without network.
struct Whoami: SignInCommand {
    static let spec = CommandSpec(of: Self.self, options: AccountReading.options, summary: "Print the signed-in profile (no network)",
                                  details: "Prints the signed-in profile from the store, without network. With --resource URL, the sign-in for that API.",
                                  takesAccount: true)

    let reading: AccountReading
    var json: Bool { reading.json }

    init(_ a: Arguments, _ env: [String: String]) throws(UsageError) { reading = AccountReading(a) }

    func run(_ r: CommandRun) throws -> ExitCode { try reading.run(r, forwarded: run(through:), local: run(in:)) }

    /// Through a forwarded agent: the profile in the forwarded ID token.
    func run(through agent: AgentTokens) throws(SignInError) -> ExitCode? { try ForwardedAgent.whoami(agent, json: json) }

    func run(in c: Context) throws(SignInError) -> ExitCode {
        let user = try c.client.signedInUser(account: c.account)
        if let ended = user.grantEndedAt { throw SignInError.noPreviousSignIn(reason: .grantEnded(on: ended)) }
        printProfile(user, c, verb: nil)
        return .success
    }
}
