/// The one rule for comparing issuers. An issuer is kept and compared exactly as configured (some end in "/"),
/// except Google's, whose ID tokens and discovery may name it with or without the scheme.
enum Issuer {
    /// Google's issuer, the default.
    static let google = "https://accounts.google.com"

    /// True for Google's issuer in either of the forms Google uses.
    static func isGoogle(_ issuer: String) -> Bool {
        issuer == google || issuer == "accounts.google.com" || issuer == "https://accounts.google.com/"
    }

    /// Whether an issuer named by a provider (`iss` in a token, a callback or a discovery document) is `expected`.
    static func same(_ named: String, _ expected: String) -> Bool {
        named == expected || (isGoogle(expected) && isGoogle(named))
    }
}
