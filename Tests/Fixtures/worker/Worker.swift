import SignInKit
import FoundationEssentials
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
        // WORKER_HEADERS_CALLS=N with WORKER_RESOURCE=URL (an API signed in to from its address): N cached
        // `APIAuthorizer.headers(method:url:)` calls off the main actor, then N from it; each run's time.
        if let calls = env("WORKER_HEADERS_CALLS").flatMap({ Int($0) }), let resource = env("WORKER_RESOURCE") {
            let api = APIAuthorizer(resource: resource, storeDirectory: store)
            let url = URL(string: resource)!
            do throws(SignInError) {
                _ = try await api.headers(method: "POST", url: url)  // the first: from the store
                let start = ContinuousClock.now
                for _ in 0..<calls { _ = try await api.headers(method: "POST", url: url) }
                let off = ContinuousClock.now - start
                let main = try await onMainActor(api, url, calls)
                func us(_ d: Duration) -> Double { Double(d.components.seconds) * 1e6 + Double(d.components.attoseconds) / 1e12 }
                print("headers \(calls) off-main \(us(off) / Double(calls)) us main \(us(main) / Double(calls)) us")
            } catch {
                print("failed: \(error)")
                exit(1)
            }
            return
        }
        let client = SignInClient(configuration: SignInConfiguration(clientID: id, issuer: issuer), storeDirectory: store)
        await refreshOnce(client)
    }

    /// `calls` cached headers from the main actor, as a UI program asks.
    @MainActor static func onMainActor(_ api: APIAuthorizer, _ url: URL, _ calls: Int) async throws(SignInError) -> Duration {
        let start = ContinuousClock.now
        for _ in 0..<calls { _ = try await api.headers(method: "POST", url: url) }
        return ContinuousClock.now - start
    }

    static func refreshOnce(_ client: SignInClient) async {
        func env(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }
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
