import SignInBase
import SignInTransport

/// The one rule for comparing issuers. An issuer is kept and compared exactly as configured (some end in "/"),
/// except where the provider's rules name other spellings (`ProviderRules.issuerAliases`: Google's ID tokens may
/// name it with or without the scheme), which only a caller holding the configuration's rules can know.
package enum Issuer {
    /// Whether an issuer named by a provider (`iss` in a token, a callback or a discovery document) is `expected`,
    /// `rules` being the expected provider's (nil: exact comparison).
    package static func same(_ named: String, _ expected: String, rules: ProviderRules? = nil) -> Bool {
        guard named != expected else { return true }
        guard let rules else { return false }
        return rules.names(expected) && rules.names(named)
    }
}
