import Foundation
import Testing

/// A proxy in the environment never sees a request to this machine (plain http: the refresh token and the client
/// secret would cross it in clear).
@Suite struct ProxyTests {
    @Test func aLoopbackProviderIsNeverReachedThroughAProxy() throws {
        let strict = try Shared.strict.get()
        let box = try strict.signedInSandbox(extra: ["http_timeout": 3])
        let proxy = try SilentServer()
        let env = ["http_proxy": proxy.url, "HTTP_PROXY": proxy.url, "ALL_PROXY": proxy.url, "all_proxy": proxy.url, "NO_PROXY": "", "no_proxy": ""]
        let r = try box.signin(["token", "--force-refresh"], env: env)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(!proxy.hasPendingConnection, "the request went to the proxy")
    }
}
