@_spi(CLI) import SignInKit

/// `signin dpop-proof --method M --url U`: a DPoP proof (RFC 9449) for one request presenting the access token
/// `signin token` prints, for a grant bound to this machine's key. The private key never leaves signin.
struct DPoPProofCommand: SignInCommand {
    static var name: String { "dpop-proof" }
    static let methodOption = OptionSpec("--method", value: "METHOD", "The request's HTTP method (default GET)")
    static let urlOption = OptionSpec("--url", value: "URL", "The request's URL (query and fragment are left out of the proof)")
    static let spec = CommandSpec(
        name: name, summary: "Print a DPoP proof for one request with the access token (DPoP-bound grants)",
        details: """
            For a grant bound to this machine's key with DPoP (RFC 9449; `dpop` in the configuration, used where the
            provider offers it), prints a proof for one request: send it as the `DPoP` header, with
            `Authorization: DPoP <token>` and the token `signin token` prints (the proof names that token, so take
            both with the same --min-ttl). One proof per request. Exit 1 when the grant is a bearer grant: no proof
            is needed there, and `signin token --json` says `"token_type":"Bearer"`.
            """,
        ownOptions: [methodOption, urlOption, .minTTL], takesAccount: true)

    let method: String
    let url: String
    let freshness: Freshness

    init(_ a: Arguments, _ env: [String: String]) throws(UsageError) {
        method = (a.value(Self.methodOption) ?? "GET").uppercased()
        guard !method.isEmpty, method.utf8.allSatisfy({ (0x41...0x5A).contains($0) }) else { throw UsageError("--method must be an HTTP method such as GET or POST") }
        guard let u = a.value(Self.urlOption), u.hasPrefix("https://") || u.hasPrefix("http://"), u.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw UsageError("usage: signin dpop-proof --url https://... [--method GET]")
        }
        url = u
        freshness = try Freshness(a)
        try noPositional(a, Self.spec)
    }

    func run(_ c: Context) throws(SignInError) -> ExitCode {
        let issued = try LocalTokens(c: c, chain: [], interactive: false).token(.access, freshness, audience: nil)
        guard let proof = try issued.dpopProof(method: method, url: url) else {
            throw .unsupported(reason: "this account's grant is not bound to a key (its tokens are bearer tokens: no DPoP proof is needed). `dpop` in \(c.client.configuration.sourcePath) and the provider's discovery decide it at sign-in")
        }
        out(proof)
        return .success
    }
}
