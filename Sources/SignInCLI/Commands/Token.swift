@_spi(CLI) import SignInKit

/// `signin token`: only the access token on standard output, refreshed first when needed.
struct Token: SignInCommand {
    static var name: String { "token" }
    static let spec = CommandSpec(
        name: name, summary: "Print a fresh access token (refreshes only when needed)",
        details: """
            Prints only the access token on standard output, refreshed first when it expires within --min-ttl
            seconds. No network when the stored one is fresh enough. Parallel calls share one refresh. With
            --impersonate-service-account (or impersonate_service_account), the service account's token instead,
            minted with yours through the IAM Service Account Credentials API and kept encrypted until it expires.
            """,
        ownOptions: [.minTTL, .forceRefresh, Impersonation.option], takesAccount: true)

    let freshness: Freshness
    let chain: [String]?

    init(_ a: Arguments, _ env: [String: String]) throws(UsageError) {
        freshness = try Freshness(a)
        chain = try Impersonation.chain(a)
        try noPositional(a, Self.spec)
    }

    func run(_ c: Context) throws(SignInError) -> ExitCode {
        let chain = Impersonation.chain(self.chain, c)
        let token: SignInToken, subject: String
        if chain.isEmpty {
            // The cached path: nothing but the restore.
            let user = try c.restore(freshness)
            guard let t = user.accessToken else { throw SignInError.noPreviousSignIn(reason: .noToken(.access)) }
            (token, subject) = (t, user.userID)
        } else {
            (token, _) = try Impersonation.token(c, freshness, kind: .access, chain: chain)
            subject = chain.last!
        }
        if c.json {
            out(JSONText.object(["access_token": .string(token.value), "expires_at": token.expirationDate.map { .string(iso8601($0)) } ?? .null,
                                 "token_type": .string("Bearer"), "sub": .string(subject)]))
        } else {
            out(token.value)
        }
        return .success
    }
}
