import Foundation
import Testing

/// A rotated refresh token is the grant: whatever else is wrong with the answer that carries it, it is saved before
/// the answer is refused, and an absurd lifetime is bounded rather than fatal. An exchange that issues anything but an
/// access token is refused, never handed out as one.
@Suite struct RotatedGrantTests {
    /// A provider that rotates and says `expires_in` 400,000,000: the answer is taken (the lifetime bounded to a
    /// year), on the grant's own refresh and on a resource refresh, and the grant keeps working.
    @Test func anAbsurdLifetimeIsBoundedAndTheRotatedGrantKept() throws {
        let strict = try Shared.strict.get()
        let orders = TokensForEveryAPITests.orders
        let box = try strict.signedInSandbox(["rotate": true], extra: ["resources": [orders]])
        try strict.control(box.clientID, ["access_ttl": 400_000_000])
        let own = try box.signin("token", "--force-refresh", "--json")
        #expect(own.status == 0, "\(own.stderr)")
        let expiresAt = (TokensForEveryAPITests.json(own.stdout)["expires_at"] as? String).flatMap { ISO8601DateFormatter().date(from: $0) }
        let yearFromNow = Date().addingTimeInterval(365 * 86_400 + 5)
        #expect(expiresAt.map { $0 <= yearFromNow && $0 > Date().addingTimeInterval(364 * 86_400) } == true, "bounded to a year: \(own.stdout)")
        let resource = try box.signin("token", "--resource", orders)
        #expect(resource.status == 0, "\(resource.stderr)")
        try strict.control(box.clientID, ["access_ttl": 3600])
        let again = try box.signin("token", "--force-refresh")
        #expect(again.status == 0, "the rotated refresh token was kept: \(again.stderr)")
    }

    /// An answer refused for its token type still carries the rotated refresh token: saved first, so after the
    /// provider is fixed the next refresh works (before: "run signin login", the grant dead).
    @Test func aRefusedAnswerStillSavesTheRotatedRefreshToken() throws {
        let strict = try Shared.strict.get()
        let box = try strict.signedInSandbox(["rotate": true])
        try strict.control(box.clientID, ["token_type": "mac"])
        let refused = try box.signin("token", "--force-refresh")
        #expect(refused.status != 0 && refused.stderr.contains("token_type"), "\(refused.stderr)")
        try strict.control(box.clientID, ["token_type": "Bearer"])
        let next = try box.signin("token", "--force-refresh")
        #expect(next.status == 0, "the refresh token the refused answer rotated to is the grant: \(next.stderr)")
    }

    /// A token exchange whose `issued_token_type` is a refresh token is refused, not handed out as an access token.
    @Test func anExchangeThatIssuesARefreshTokenIsRefused() throws {
        let strict = try Shared.strict.get()
        let box = try strict.signedInSandbox(["exchange_issued_type": "urn:ietf:params:oauth:token-type:refresh_token"])
        let r = try box.signin("token", "--audience", "orders-api")
        #expect(r.status != 0 && r.stdout.isEmpty, "\(r.stdout) \(r.stderr)")
        #expect(r.stderr.contains("refresh_token") && r.stderr.contains("not an access token"), "\(r.stderr)")
    }
}
