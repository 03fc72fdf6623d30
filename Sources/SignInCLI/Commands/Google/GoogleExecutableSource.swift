import FoundationEssentials
import SignInKit

/// `signin google-executable-source`: the command of an `external_account` file's executable credential source.
struct GoogleExecutableSource: SignInCommand {
    static let spec = CommandSpec(
        of: Self.self, options: [], summary: "google-auth's executable credential source: your ID token for Google's STS",
        details: """
            Prints what google-auth (and gcloud, and every Google client library) reads from an external_account
            file's credential_source.executable: {"version": 1, "success": true, "token_type":
            "urn:ietf:params:oauth:token-type:id_token", "id_token": ..., "expiration_time": ...}, your ID token
            fresh for five more minutes; or {"success": false, "code", "message"} and signin's exit code. The
            libraries run it only with GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES=1. `signin google
            external-account` writes the file. Over `signin ssh`, the laptop's agent gives the ID token.
            """,
        takesAccount: true, takesJSON: false)

    static let tokenType = "urn:ietf:params:oauth:token-type:id_token"

    init(_ a: Arguments, _ env: [String: String]) throws(UsageError) {}

    func run(_ r: CommandRun) throws -> ExitCode {
        if let agent = r.agent, let answered = try run(through: agent) { return answered }
        return try run(in: r.context())
    }

    func run(in c: Context) throws(SignInError) -> ExitCode { try serve(LocalTokens(c: c, chain: [], interactive: false)) }

    func run(through agent: AgentTokens) throws(SignInError) -> ExitCode? { try serve(agent.impersonating([])) }

    /// 1. The person's ID token, valid for five more minutes (the STS exchange and the library's own margin).
    /// 2. A failure is the documented error answer on standard output (the libraries show it) and signin's usual
    ///    message and exit code.
    private func serve(_ source: some TokenSource) throws(SignInError) -> ExitCode {
        let a = answer(source)
        _ = BridgeAnswer(output: a.output).write(source.io)
        if let failure = a.failure { throw failure }
        return .success
    }

    /// The executable's response for `source`'s ID token, and the error that ended it (then the response is the
    /// documented failure shape).
    func answer(_ source: some TokenSource) -> (output: String, failure: SignInError?) {
        do throws(SignInError) {
            let token = try source.token(.id, Freshness(minTTL: 300)).token
            var o: [String: JSONValueOut] = ["version": .int(1), "success": .bool(true), "token_type": .string(Self.tokenType), "id_token": .string(token.value)]
            if let exp = token.expirationDate { o["expiration_time"] = .int(Int(exp.timeIntervalSince1970)) }
            return (JSONText.object(o) + "\n", nil)
        } catch {
            return (JSONText.object(["version": .int(1), "success": .bool(false), "code": .string("signin-exit-\(ExitCode(error).rawValue)"),
                                     "message": .string(error.description)]) + "\n", error)
        }
    }
}
