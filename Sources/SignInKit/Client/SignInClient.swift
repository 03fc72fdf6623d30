import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Google Sign-In's `GIDSignIn` for Swift programs on Linux: sign in through the browser, restore the previous
/// sign-in silently, hand out fresh access tokens, sign out and disconnect.
///
/// ```swift
/// let client = SignInClient(configuration: try SignInConfiguration.load(path: "config.json"))
/// let user = client.hasPreviousSignIn ? try await client.restorePreviousSignIn() : try await client.signIn()
/// print(user.profile.displayName)
/// ```
public final class SignInClient: Sendable {
    /// The client and provider this instance signs in with.
    public let configuration: SignInConfiguration
    /// Where credentials are kept: the encrypted `CredentialStore` unless the program gave its own.
    public let storage: any CredentialStorage
    let environment: [String: String]
    let onEvent: @Sendable (SignInEvent) -> Void
    let observers = CurrentUserObservers()
    /// The endpoints discovered once in this process (a sign-in, `discoverEndpoints()`).
    let discovered = Locked<ProviderEndpoints?>(nil)

    /// - Parameters:
    ///   - storeDirectory: defaults to `$XDG_DATA_HOME/signin` (`~/.local/share/signin`).
    ///   - environment: where `$BROWSER`, `$HOME` and friends are read; defaults to the process environment.
    ///   - onEvent: called (on any thread) as a sign-in progresses.
    ///   - passphrase: asked when the store's key is under a passphrase (`key_storage: passphrase`).
    ///   - appName: a program's own name: its credentials then live in `$XDG_DATA_HOME/<appName>` (apart from the
    ///     `signin` command's and other programs'), unless `storeDirectory` says otherwise.
    public init(configuration: SignInConfiguration, storeDirectory: String? = nil, environment: [String: String]? = nil,
                onEvent: @escaping @Sendable (SignInEvent) -> Void = { _ in }, passphrase: PassphraseProvider? = nil, appName: String? = nil) {
        let env = environment ?? ProcessEnvironment.current
        self.configuration = configuration
        self.environment = env
        var custody = KeyCustody(storage: configuration.keyStorage, cacheDuration: configuration.keyCacheDuration, passphrase: passphrase,
                                 sessionBusAvailable: !(env["DBUS_SESSION_BUS_ADDRESS"] ?? "").isEmpty)
        custody.configurationPath = configuration.sourcePath
        let directory = storeDirectory ?? CredentialStore.defaultDirectory(environment: env, appName: appName ?? "signin")
        self.storage = CredentialStore(directory: directory, custody: custody)
        self.onEvent = onEvent
    }

    /// A client that keeps its credentials in `storage`: an `InMemoryCredentialStorage` in a program's tests, or a
    /// program's own `CredentialStorage`.
    public init(configuration: SignInConfiguration, storage: any CredentialStorage, environment: [String: String]? = nil,
                onEvent: @escaping @Sendable (SignInEvent) -> Void = { _ in }) {
        self.configuration = configuration
        self.environment = environment ?? ProcessEnvironment.current
        self.storage = storage
        self.onEvent = onEvent
    }

    /// The encrypted file store, when that is where this client keeps credentials (for its folder and key).
    public var credentialStore: CredentialStore? { storage as? CredentialStore }

    var issuer: String { configuration.issuer }
    var clientID: String { configuration.clientID }
    /// This client at its provider: what its credentials are kept under.
    var identity: ClientIdentity { configuration.identity }

    // MARK: The provider

    /// The provider's endpoints, from discovery (or the configuration's overrides). Blocks on the network.
    public func discoverEndpoints() throws(SignInError) -> ProviderEndpoints {
        if let known = discovered.withLock({ $0 }) { return known }
        let endpoints = try Discovery.endpoints(for: configuration, http: HTTPClient(configuration: configuration))
        discovered.withLock { $0 = endpoints }
        return endpoints
    }

    /// The endpoints already discovered in this process, if any (no network).
    var knownEndpoints: ProviderEndpoints? { discovered.withLock { $0 } }

    /// Whether the provider, as discovered in this process, offers the device flow (nil: not discovered yet).
    @_spi(CLI) public var offersDeviceFlow: Bool? { knownEndpoints.map { $0.deviceAuthorization != nil } }

    /// The provider's userinfo for an access token (see `SignInUser.userInfo()`).
    func userInfo(accessToken: String) async throws(SignInError) -> [String: String] {
        try await offPool { (_) throws(SignInError) -> [String: String] in
            let o = try TokenClient(config: self.configuration, endpoints: try self.discoverEndpoints()).userinfo(accessToken: accessToken)
            var out: [String: String] = [:]
            for (k, v) in o {
                switch v {
                case .string(let x): out[k] = x
                case .bool(let b): out[k] = b ? "true" : "false"
                case .number(let n): out[k] = n.rounded() == n && abs(n) < 1e15 ? String(Int(n)) : String(n)
                default: continue
                }
            }
            return out
        }
    }

    /// A sign-in whose progress arrives as an `AsyncSequence`, in order, ending when the sign-in ends; iterate it
    /// from any actor (a `@MainActor` UI included). `user` is the sign-in itself: await its value (or cancel it).
    public func signInWithEvents(hint: String? = nil, additionalScopes: [String] = [], options: SignInOptions = SignInOptions())
        -> (events: AsyncStream<SignInEvent>, user: Task<SignInUser, any Error>) {
        let (stream, continuation) = AsyncStream<SignInEvent>.makeStream(bufferingPolicy: .unbounded)
        let task = Task { () async throws -> SignInUser in
            defer { continuation.finish() }
            return try await self.signIn(hint: hint, additionalScopes: additionalScopes, options: options) { continuation.yield($0) }
        }
        return (stream, task)
    }

    /// The current user now, then again each time it changes through this client: a sign-in, a sign-out, a
    /// switch of account (nil: no one is signed in). For a UI that shows who is signed in without re-reading.
    public func currentUserUpdates() -> AsyncStream<SignInUser?> {
        let (stream, continuation) = AsyncStream<SignInUser?>.makeStream(bufferingPolicy: .bufferingNewest(8))
        continuation.yield(currentUser)
        observers.add(continuation)
        return stream
    }

    func currentUserChanged() { observers.send(currentUser) }
}

extension SignInError {
    /// The provider refused the stored grant on `date` (revoked, expired, or a reused refresh token).
    public static func grantEnded(on date: Date) -> SignInError {
        .noPreviousSignIn(reason: .grantEnded(on: date))
    }
}

/// Who watches `currentUserUpdates()`.
final class CurrentUserObservers: Sendable {
    private let continuations = Locked<[AsyncStream<SignInUser?>.Continuation]>([])

    func add(_ c: AsyncStream<SignInUser?>.Continuation) { continuations.withLock { $0.append(c) } }

    func send(_ user: SignInUser?) {
        continuations.withLock { list in
            list.removeAll { c in
                if case .terminated = c.yield(user) { return true }
                return false
            }
        }
    }
}
