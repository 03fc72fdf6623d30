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

    /// Item 13 (b): the disk fills while a rotating refresh is on its way; the room its save needs was taken before the
    /// request went out, so the rotated refresh token is saved and the next refresh works (before: ENOSPC after the
    /// rotation, the grant lost, and a message saying the previous credentials were intact).
    @Test func aRotatedRefreshTokenIsSavedWhenTheDiskFillsDuringTheRequest() throws {
        let strict = try Shared.strict.get()
        let box = try strict.sandbox(["rotate": true])
        let data = box.root.appendingPathComponent("data").path
        try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
        let mounted = try Subprocess.run("/bin/mount", ["-t", "tmpfs", "-o", "size=1m,mode=0700", "tmpfs", data])
        try #require(mounted.status == 0, "a small tmpfs for the store (the tests run as root): \(mounted.stderr)")
        defer { _ = try? Subprocess.run("/bin/umount", [data]) }
        #expect(try box.signin("login").status == 0)
        try strict.control(box.clientID, ["refresh_hold": true])
        let refresh = try ParallelRun(box, ["token", "--force-refresh"])
        #expect(waitFor { (try? strict.stats(box.clientID)["refreshes"] as? Int ?? 0) == 1 }, "the refresh reached the provider")
        // The disk fills while the provider is answering.
        let fill = try Subprocess.run("/bin/sh", ["-c", "cat /dev/zero > \"$0/fill\"; df -k \"$0\" | tail -1", data])
        #expect(fill.stdout.contains(" 100% "), "the tmpfs is full: \(fill.stdout)")
        try strict.control(box.clientID, ["refresh_hold": false])
        let r = try refresh.wait()
        #expect(r.status == 0, "the rotated token was saved into the room taken before the request: \(r.stderr)")
        // Full again: a refresh cannot take its room, so it is not sent (nothing spent), and says why.
        _ = try Subprocess.run("/bin/sh", ["-c", "cat /dev/zero >> \"$0/fill\"", data])
        let full = try box.signin("token", "--force-refresh")
        #expect(full.status == 1 && full.stderr.contains("no room to save a refreshed sign-in") && full.stderr.contains("not sent"), "\(full.stderr)")
        #expect(try strict.stats(box.clientID)["refreshes"] as? Int == 1, "no request went out without room for its answer")
        unlink(data + "/fill")
        let next = try box.signin("token", "--force-refresh")
        #expect(next.status == 0, "the grant is alive: \(next.stderr)")
    }
}
