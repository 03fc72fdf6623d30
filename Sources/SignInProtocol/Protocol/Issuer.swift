import SignInBase
import SignInTransport

/// The one rule for comparing issuers. An issuer is kept and compared exactly as configured (some end in "/"),
/// except where the provider's rules name other spellings (`ProviderRules.issuerAliases`: Google's ID tokens and
/// discovery may name it with or without the scheme).
/// (Whether an issuer is Google's is `ProviderRules.isGoogle`, the one place Google's facts are.)
package enum Issuer {
    /// Whether an issuer named by a provider (`iss` in a token, a callback or a discovery document) is `expected`.
    package static func same(_ named: String, _ expected: String) -> Bool {
        let rules = ProviderRules.forIssuer(expected)
        return named == expected || (rules.names(expected) && rules.names(named))
    }
}
