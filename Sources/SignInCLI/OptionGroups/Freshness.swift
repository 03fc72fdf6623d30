import SignInKit

/// `--min-ttl` and `--force-refresh`, as the token commands and bridges read them: the two groups below, together.
struct Freshness: OptionGroup {
    static let options = MinimumValidity.options + RefreshChoice.options
    let minTTL: Int
    let forceRefresh: Bool

    init(_ a: Arguments) throws(UsageError) {
        minTTL = try MinimumValidity(a).seconds
        forceRefresh = try RefreshChoice(a).forceRefresh
    }

    /// Whether the static half of the release build can start this run: a forced refresh needs the network (the
    /// dynamic half, which loads libcurl), so it is handed over at once, unless a forwarded agent answers it.
    func startsStatic(_ a: Arguments, _ env: [String: String]) -> Bool { Self.startsStatic(forceRefresh: forceRefresh, a, env) }

    /// The same rule for a command with `--force-refresh` alone (`aws-credential-process`), so its hand-over is the
    /// token commands'.
    static func startsStatic(forceRefresh: Bool, _ a: Arguments, _ env: [String: String]) -> Bool {
        !forceRefresh || ForwardedAgent.socket(a, env) != nil
    }

    /// Why a run `startsStatic` turns away is handed over.
    static let handOverReason = "a forced refresh loads libcurl"

    init(minTTL: Int, forceRefresh: Bool = false) {
        self.minTTL = minTTL
        self.forceRefresh = forceRefresh
    }
}

/// `--min-ttl SECONDS` alone, for the bridges (whose consumers ask again when a token ends).
struct MinimumValidity: OptionGroup {
    static let options: [OptionSpec] = [.minTTL]
    let seconds: Int
    init(_ a: Arguments) throws(UsageError) { seconds = try a.int(.minTTL, default: 60, in: 0...86400) }
}

/// `--force-refresh` alone (`aws-credential-process`), with the token commands' hand-over rule.
struct RefreshChoice: OptionGroup {
    static let options: [OptionSpec] = [.forceRefresh]
    let forceRefresh: Bool
    init(_ a: Arguments) throws(UsageError) { forceRefresh = a.has(.forceRefresh) }
}
