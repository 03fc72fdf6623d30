import FoundationEssentials

extension Duration {
    /// As seconds, for `Date` arithmetic and the C interfaces.
    package var timeInterval: Double {
        let (s, atto) = components
        return Double(s) + Double(atto) / 1e18
    }

    /// Whole seconds, a part second counting as one: what the C interfaces and the configuration file take.
    package var wholeSecondsRoundedUp: Int { Int(timeInterval.rounded(.up)) }
}
