import SignInBase
import SignInProtocol

/// The rule for a new store passphrase. A passphrase key's only protection against a copy of the store folder
/// is the passphrase itself (scrypt slows each guess to about a quarter of a second, not more), so a short one is
/// refused rather than accepted silently.
public enum StorePassphrase {
    /// The fewest characters a new passphrase may have.
    public static let minimumLength = 8

    /// Why `passphrase` may not protect a new key, or nil when it may.
    public static func problem(_ passphrase: String) -> String? {
        if passphrase.count < minimumLength {
            return "a passphrase needs at least \(minimumLength) characters (it alone protects the key against a copy of the store folder)"
        }
        return nil
    }
}
