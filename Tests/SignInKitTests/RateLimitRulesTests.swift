import Foundation
import Testing
@testable import SignInKit
@testable import SignInBase
@testable import SignInTransport
@testable import SignInProtocol
@testable import SignInStorage

/// The fifth review's rules that need no process.
@Suite struct RateLimitRulesTests {
    /// a forwarded session's refusal for asking too often is not "not signed in" (exit 3): it says so, and
    /// how long to wait.
    @Test func aForwardedRequestRefusedForBeingTooFrequentIsRateLimitedNotSignedOut() {
        let client = AgentClient(socketPath: "/nonexistent")
        let refusal = AgentClient.Answer(status: 429, object: ["error": .string("too_many"), "retry_after": .number(42),
                                                               "message": .string("a refresh was forced through this forwarded session 3 s ago")])
        let e = client.failure(refusal)
        guard case .rateLimited(_, let after) = e else { Issue.record("\(e)"); return }
        #expect(after == 42)
        #expect(e.description.contains("asked too often") && e.description.contains("42 s"), "\(e)")
        // Anything else the agent refuses is still its reason, not signed in.
        let other = client.failure(AgentClient.Answer(status: 409, object: ["error": .string("not_signed_in"), "message": .string("no one")]))
        guard case .noPreviousSignIn = other else { Issue.record("\(other)"); return }
    }

    /// `Retry-After` in seconds or as an HTTP date; a hostile value is capped, an unreadable one ignored.
    @Test func retryAfterIsReadInSecondsOrAsADate() {
        let now = Date(timeIntervalSince1970: 784_111_717)  // Sun, 06 Nov 1994 08:48:37 GMT
        #expect(OAuthError.retryAfterSeconds("120", now: now) == 120)
        #expect(OAuthError.retryAfterSeconds("Sun, 06 Nov 1994 08:49:37 GMT", now: now) == 60)
        #expect(OAuthError.retryAfterSeconds("99999999999", now: now) == 86_400)
        #expect(OAuthError.retryAfterSeconds("soon", now: now) == nil)
        #expect(OAuthError.retryAfterSeconds(nil, now: now) == nil)
        let e = OAuthError.from(HTTPResponse(status: 429, body: Data(#"{"error":"slow_down"}"#.utf8), headers: ["retry-after": "30"]), endpoint: "https://p/token")
        #expect(e == .rateLimited(endpoint: "https://p/token", retryAfterSeconds: 30))
    }
}
