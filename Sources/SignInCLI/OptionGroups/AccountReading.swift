import SignInKit

/// What the commands that read one stored account without network take (`whoami`, `status`): `--json`, and
/// `--resource URL` for the sign-in made for that API.
struct AccountReading: OptionGroup {
    static let options: [OptionSpec] = [.json, TokenTarget.apiAccountOption]

    let json: Bool
    /// `--resource URL`: the sign-in for that API.
    let apiResource: String?

    init(_ a: Arguments) {
        json = a.has(.json)
        apiResource = TokenTarget.apiAccount(a)
    }

    /// An account command's run: through a forwarded agent when the session goes through one and it answers
    /// (`forwarded`), else `local` with a client for this run's account (and the sign-in of `--resource`'s API).
    func run(_ r: CommandRun, forwarded: (AgentTokens) throws(SignInError) -> ExitCode?,
             local: (Context) throws(SignInError) -> ExitCode) throws -> ExitCode {
        if let agent = r.agent, let answered = try forwarded(agent) { return answered }
        return try local(r.context(resource: apiResource))
    }
}
