import SignInKit
#if canImport(Glibc)
import Glibc
#endif

/// A long-running program on SignInKit, as an adopter writes one, for the tests: it takes `SignalHolding`, then
/// forces one refresh and says how it ended. The tests signal it while the refresh is in flight.
/// Environment: WORKER_CLIENT_ID, WORKER_ISSUER, WORKER_STORE (the store folder).
@main struct Worker {
    static func main() async {
        SignalHolding.install()
        func env(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }
        guard let id = env("WORKER_CLIENT_ID"), let issuer = env("WORKER_ISSUER"), let store = env("WORKER_STORE") else {
            print("worker: WORKER_CLIENT_ID, WORKER_ISSUER and WORKER_STORE are needed")
            exit(2)
        }
        let client = SignInClient(configuration: SignInConfiguration(clientID: id, issuer: issuer), storeDirectory: store)
        // WORKER_CACHED_CALLS=N: restore, then N cached `freshToken()` calls (what a program asking for its token
        // before every request does), then says the token's last characters and how long the calls took.
        if let calls = env("WORKER_CACHED_CALLS").flatMap({ Int($0) }) {
            do throws(SignInError) {
                let user = try await client.restorePreviousSignIn()
                var last = ""
                let start = ContinuousClock.now
                // WORKER_RESOURCE=URL: the token for that API alone (`freshToken(resource:)`), as an API client asks.
                if let resource = env("WORKER_RESOURCE") {
                    last = try await user.freshToken(resource: resource, audience: nil).value  // the first: from the store
                    let start = ContinuousClock.now
                    for _ in 0..<calls { last = try await user.freshToken(resource: resource, audience: nil).value }
                    let took = ContinuousClock.now - start
                    print("cached \(calls) \(String(last.suffix(6))) \(took.components.seconds * 1_000_000 + took.components.attoseconds / 1_000_000_000_000) us")
                    return
                }
                for _ in 0..<calls { last = try await user.freshToken().value }
                let took = ContinuousClock.now - start
                print("cached \(calls) \(String(last.suffix(6))) \(took.components.seconds * 1_000_000 + took.components.attoseconds / 1_000_000_000_000) us")
            } catch {
                print("failed: \(error)")
                exit(1)
            }
            return
        }
        do throws(SignInError) {
            _ = try await client.restorePreviousSignIn(forceRefresh: true)
            print("refreshed")
        } catch {
            print("failed: \(error)")
            exit(1)
        }
    }
}
