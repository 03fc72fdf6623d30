import SignInKit

/// `--min-ttl` and `--force-refresh`, as the token commands and bridges read them.
struct Freshness: OptionGroup {
    static let options: [OptionSpec] = MinimumValidity.options + RefreshChoice.options

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
