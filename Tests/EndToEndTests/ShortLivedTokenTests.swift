import Foundation
import Testing

/// A refreshed token that never lives the default `--min-ttl` (try-locally's `--token-ttl 30` against 60 s) is fresh
/// for the first half of its life: `token` and another consumer get the same token, and no call refreshes for nothing.
@Suite struct ShortLivedTokenTests {
    @Test func aTokenShorterThanTheMinimumValidityIsNotRefreshedOnEveryCall() throws {
        let strict = try Shared.strict.get()
        let box = try strict.signedInSandbox(["access_ttl": 30, "rotate": true])
        // The sign-in's token cannot live a minute: one refresh, then the refreshed token serves.
        let first = try box.signin("token")
        let second = try box.signin("token")
        let viaJSON = try box.signin("token", "--json")
        #expect(first.status == 0 && second.status == 0, "\(first.stderr) \(second.stderr)")
        #expect(first.stdout == second.stdout, "the same token for two calls")
        #expect(TokensForEveryAPITests.json(viaJSON.stdout)["access_token"] as? String == first.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(try strict.stats(box.clientID)["refreshes"] as? Int ?? 0 == 1, "one refresh, not one per call")
        // A longer minimum asked on purpose is honoured as asked: a refresh.
        let longer = try box.signin("token", "--min-ttl", "120")
        #expect(longer.status == 0 && longer.stdout != first.stdout, "\(longer.stderr)")
    }
}
