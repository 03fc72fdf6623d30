@_spi(CLI) import SignInKit

/// `signin id-token`: only the ID token, refreshed first when needed; `--json` adds its expiry and claims.
struct IDTokenCommand: SignInCommand {
    static var name: String { "id-token" }
    static let spec = CommandSpec(
        name: name, summary: "Print a fresh OpenID Connect ID token (as gcloud auth print-identity-token)",
        details: "Prints only the ID token, refreshed first when it expires within --min-ttl seconds. A provider that\nsends no new ID token on refresh is an error that says so. --json adds its expiry and claims.",
        ownOptions: [.minTTL, .forceRefresh], takesAccount: true)

    let freshness: Freshness

    init(_ a: Arguments, _ env: [String: String]) throws(UsageError) {
        freshness = try Freshness(a)
        try noPositional(a, Self.spec)
    }

    func run(_ c: Context) throws(SignInError) -> ExitCode {
        let user = try c.restore(freshness, .id)
        guard let token = user.idToken else { throw SignInError.noPreviousSignIn(reason: .noToken(.id)) }
        if c.json {
            out(JSONText.object(["id_token": .string(token.value), "expires_at": token.expirationDate.map { .string(iso8601($0)) } ?? .null,
                                 "claims": JSONText.claims(of: token.value)]))
        } else {
            out(token.value)
        }
        return .success
    }
}
