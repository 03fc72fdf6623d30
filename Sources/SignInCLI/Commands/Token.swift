@_spi(CLI) import SignInKit

/// `signin token`: only the access token on standard output, refreshed first when needed.
struct Token: SignInCommand {
    static var name: String { "token" }
    static let spec = CommandSpec(
        name: name, summary: "Print a fresh access token (refreshes only when needed)",
        details: "Prints only the access token on standard output, refreshed first when it expires within --min-ttl\nseconds. No network when the stored one is fresh enough. Parallel calls share one refresh.",
        ownOptions: [.minTTL, .forceRefresh], takesAccount: true)

    let freshness: Freshness

    init(_ a: Arguments, _ env: [String: String]) throws(UsageError) {
        freshness = try Freshness(a)
        try noPositional(a, Self.spec)
    }

    func run(_ c: Context) throws(SignInError) -> ExitCode {
        let user = try c.restore(freshness)
        guard let token = user.accessToken else { throw SignInError.noPreviousSignIn(reason: .noToken(.access)) }
        if c.json {
            out(JSONText.object(["access_token": .string(token.value), "expires_at": token.expirationDate.map { .string(iso8601($0)) } ?? .null,
                                 "token_type": .string("Bearer"), "sub": .string(user.userID)]))
        } else {
            out(token.value)
        }
        return .success
    }
}
