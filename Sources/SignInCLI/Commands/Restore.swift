import SignInKit

/// `signin restore`: the sign-in restored without a browser, refreshed when needed; prints who.
struct Restore: SignInCommand {
    static let spec = CommandSpec(
        of: Self.self, options: Freshness.options, summary: "Restore the sign-in without a browser, refreshing if needed; print who",
        details: "Restores the sign-in without a browser; refreshes the tokens when the access token expires within\n--min-ttl seconds. Prints the profile. Exits 3 when signing in again is needed.",
        takesAccount: true)

    let freshness: Freshness

    init(_ a: Arguments, _ env: [String: String]) throws(UsageError) {
        freshness = try Freshness(a)
    }

    func run(_ r: CommandRun) throws -> ExitCode {
        return try run(in: r.context())
    }

    func run(in c: Context) throws(SignInError) -> ExitCode {
        printProfile(try c.restore(freshness), c, verb: "Signed in as")
        return .success
    }
}
