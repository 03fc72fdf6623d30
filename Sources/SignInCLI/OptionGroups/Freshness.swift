@_spi(CLI) import SignInKit

/// `--min-ttl` and `--force-refresh`, as the token commands and bridges read them.
struct Freshness: Sendable {
    let minTTL: Int
    let forceRefresh: Bool

    init(_ a: Arguments) throws(UsageError) {
        minTTL = try OptionSpec.minTTL(a)
        forceRefresh = a.has(.forceRefresh)
    }

    init(minTTL: Int, forceRefresh: Bool = false) {
        self.minTTL = minTTL
        self.forceRefresh = forceRefresh
    }
}
