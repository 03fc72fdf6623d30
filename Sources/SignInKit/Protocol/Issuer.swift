/// The one rule for comparing issuers. An issuer is kept and compared exactly as configured (some end in "/"),
/// except where the provider's rules name other spellings (`ProviderRules.issuerAliases`: Google's ID tokens and
/// discovery may name it with or without the scheme).
enum Issuer {
    /// Google's issuer, the default.
    static let google = ProviderRules.googleIssuer

    /// True for Google's issuer in any of the forms Google uses.
    static func isGoogle(_ issuer: String) -> Bool { ProviderRules.isGoogle(issuer) }

    /// Whether an issuer named by a provider (`iss` in a token, a callback or a discovery document) is `expected`.
    static func same(_ named: String, _ expected: String) -> Bool {
        let rules = ProviderRules.forIssuer(expected)
        return named == expected || (rules.names(expected) && rules.names(named))
    }
}
