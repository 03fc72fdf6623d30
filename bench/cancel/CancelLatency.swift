// The cancel latency of each wait, through SignInKit's public API only: from `cancel()` (of the task, or of the
// sign-in operation) to the awaited result. Run by bench/cancel-latency, which starts the strict provider and a
// silent server and builds this as an outside package would.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import SignInKit

let args = CommandLine.arguments
let issuer = args[1], silent = args[2], storeRoot = args[3]
let runs = Int(args[4]) ?? 20

func control(_ client: String, _ settings: [String: Any]) async throws {
    var r = URLRequest(url: URL(string: "\(issuer)/_control/\(client)")!)
    r.httpMethod = "POST"
    r.httpBody = try JSONSerialization.data(withJSONObject: settings)
    _ = try await URLSession.shared.data(for: r)
}

func client(_ name: String, issuer: String = issuer) -> SignInClient {
    var c = SignInConfiguration(clientID: name, issuer: issuer)
    c.httpTimeout = .seconds(60)
    return SignInClient(configuration: c, storeDirectory: "\(storeRoot)/\(name)", environment: ProcessInfo.processInfo.environment)
}

/// Milliseconds from `cancel` to `done` returning.
func measure(_ start: @escaping @Sendable () async -> Void, cancel: () -> Void, done: () async -> Void) async -> Double {
    await start()
    let t0 = ContinuousClock.now
    cancel()
    await done()
    let d = ContinuousClock.now - t0
    return Double(d.components.seconds) * 1000 + Double(d.components.attoseconds) / 1e15
}

func median(_ xs: [Double]) -> Double { xs.sorted()[xs.count / 2] }

var rows: [(String, [Double])] = []

// 1. The browser wait: a sign-in whose browser never answers, cancelled through its SignInOperation.
var browser: [Double] = []
for i in 0..<runs {
    let c = client("cancel-browser-\(i)")
    let (events, op) = c.signInWithEvents(options: SignInOptions(openBrowser: false, timeout: .seconds(120)))
    var it = events.makeAsyncIterator()
    _ = await it.next()  // .authorizationURL: the listener is up
    let t0 = ContinuousClock.now
    op.cancel()
    _ = try? await op.value
    let d = ContinuousClock.now - t0
    browser.append(Double(d.components.attoseconds) / 1e15 + Double(d.components.seconds) * 1000)
}
rows.append(("browser wait (signInWithEvents, cancel())", browser))

// 2. Discovery against an issuer that accepts and never answers, cancelled through the task.
var discovery: [Double] = []
for _ in 0..<runs {
    let c = SignInClient(configuration: SignInConfiguration(clientID: "d", issuer: silent), storage: InMemoryCredentialStorage(), environment: [:])
    let task = Task { _ = try? await c.discoverEndpoints() }
    try? await Task.sleep(for: .milliseconds(100))
    let t0 = ContinuousClock.now
    task.cancel()
    await task.value
    let d = ContinuousClock.now - t0
    discovery.append(Double(d.components.attoseconds) / 1e15 + Double(d.components.seconds) * 1000)
}
rows.append(("discovery (silent issuer, task cancelled)", discovery))

// 3-5. The code exchange, a refresh and a revocation, each against a provider that takes 30 s to answer.
var exchange: [Double] = [], refresh: [Double] = [], revoke: [Double] = []
for i in 0..<runs {
    let name = "cancel-net-\(i)"
    let c = client(name)
    try await control(name, ["token_fault": "slow", "slow_seconds": 30, "token_fault_once": true])
    let (events, op) = c.signInWithEvents()
    let watcher = Task { for await e in events { if case .exchangingCode = e { return } } }
    await watcher.value
    try? await Task.sleep(for: .milliseconds(100))
    var t0 = ContinuousClock.now
    op.cancel()
    _ = try? await op.value
    var d = ContinuousClock.now - t0
    exchange.append(Double(d.components.attoseconds) / 1e15 + Double(d.components.seconds) * 1000)

    _ = try await c.signIn()
    try await control(name, ["token_fault": "slow", "slow_seconds": 30, "token_fault_once": true])
    let r = Task { _ = try? await c.restorePreviousSignIn(forceRefresh: true) }
    try? await Task.sleep(for: .milliseconds(100))
    t0 = ContinuousClock.now
    r.cancel()
    await r.value
    d = ContinuousClock.now - t0
    refresh.append(Double(d.components.attoseconds) / 1e15 + Double(d.components.seconds) * 1000)

    try await control(name, ["revoke_fault": "slow", "slow_seconds": 30, "revoke_fault_once": true])
    let v = Task { try? await c.disconnect() }
    try? await Task.sleep(for: .milliseconds(100))
    t0 = ContinuousClock.now
    v.cancel()
    await v.value
    d = ContinuousClock.now - t0
    revoke.append(Double(d.components.attoseconds) / 1e15 + Double(d.components.seconds) * 1000)
}
rows.append(("code exchange (slow token endpoint, cancel())", exchange))
rows.append(("refresh (slow token endpoint, task cancelled)", refresh))
rows.append(("revocation (slow endpoint, task cancelled)", revoke))

print("cancel latency through the public API, \(runs) runs each: ms from cancel() to the result (median, max)")
for (name, xs) in rows {
    print(name.padding(toLength: 50, withPad: " ", startingAt: 0) + String(format: "%8.2f %8.2f", median(xs), xs.max() ?? 0))
}
