import SignInBase
import SignInProtocol
import SignInStorage
import SignInGrant
import SignInTransport
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
    /// The entries read last, while the file store's folder is unchanged (nil for another storage).
    let resident: ResidentCredentials?

    /// - Parameters:
    ///   - storeDirectory: defaults to `$XDG_DATA_HOME/signin` (`~/.local/share/signin`).
    ///   - environment: where `$BROWSER`, `$HOME` and friends are read; defaults to the process environment.
    ///   - onEvent: called (on any thread) as a sign-in progresses.
    ///   - passphrase: asked when the store's key is under a passphrase (`key_storage: passphrase`).
    ///   - appName: a program's own name: its credentials then live in `$XDG_DATA_HOME/<appName>` (apart from the
    ///     `signin` command's and other programs'), unless `storeDirectory` says otherwise. Default: the
    ///     configuration's `appName` (set by `SignInConfiguration.loadDefault(appName:)`), so it is given once.
    public init(configuration: SignInConfiguration, storeDirectory: String? = nil, environment: [String: String]? = nil,
                onEvent: @escaping @Sendable (SignInEvent) -> Void = { _ in }, passphrase: PassphraseProvider? = nil, appName: String? = nil) {
        let env = environment ?? ProcessEnvironment.current
        self.configuration = configuration.withKnownProviders
        self.environment = env
        var custody = KeyCustody(storage: configuration.keyStorage, cacheDuration: configuration.keyCacheDuration, passphrase: passphrase,
                                 sessionBusAvailable: !(env["DBUS_SESSION_BUS_ADDRESS"] ?? "").isEmpty)
        custody.configurationPath = configuration.sourcePath
        custody.onNotice = { onEvent(.notice($0)) }
        let directory = storeDirectory ?? CredentialStore.defaultDirectory(environment: env, appName: appName ?? configuration.appName ?? "signin")
        self.storage = CredentialStore(directory: directory, custody: custody)
        resident = ResidentCredentials(directory: directory)
        self.onEvent = onEvent
    }

    /// A client that keeps its credentials in `storage`: an `InMemoryCredentialStorage` in a program's tests, or a
    /// program's own `CredentialStorage`.
    public init(configuration: SignInConfiguration, storage: any CredentialStorage, environment: [String: String]? = nil,
                onEvent: @escaping @Sendable (SignInEvent) -> Void = { _ in }) {
        self.configuration = configuration.withKnownProviders
        self.environment = environment ?? ProcessEnvironment.current
        self.storage = storage
        resident = (storage as? CredentialStore).map { ResidentCredentials(directory: $0.directory) }
        self.onEvent = onEvent
    }

    /// The encrypted file store, when that is where this client keeps credentials (for its folder and key).
    public var credentialStore: CredentialStore? { storage as? CredentialStore }

    var issuer: String { configuration.issuer }
    var clientID: String { configuration.clientID }
    /// This client at its provider: what its credentials are kept under.
    var identity: ClientIdentity { configuration.identity }

    // MARK: The provider

    /// The provider's endpoints: the configuration's overrides, else a signed-in user's (stored at sign-in), else
    /// OpenID discovery, fetched once per process for each issuer (every client of that issuer shares it).
    /// Cancelling the calling task stops a discovery that waits on the network at once (`.canceled`).
    public func discoverEndpoints() async throws(SignInError) -> ProviderEndpoints {
        if let known = cachedEndpoints() { return known }
        return try await offPool("the discovery") { (_) throws(SignInError) -> ProviderEndpoints in try self.discoverEndpointsBlocking() }
    }

    /// `discoverEndpoints()` for callers that are not async (the command line's `init`): blocks on the network.
    package func discoverEndpointsBlocking() throws(SignInError) -> ProviderEndpoints {
        if let known = cachedEndpoints() { return known }
        let endpoints = try Discovery.endpoints(for: configuration, http: HTTPClient(configuration: configuration))
        DiscoveryCache.shared.store(endpoints, for: configuration)
        return endpoints
    }

    /// Endpoints known without the network: this process's discovery of the issuer, or a stored user's.
    func cachedEndpoints() -> ProviderEndpoints? {
        if let known = knownEndpoints { return known }
        if configuration.endpoints.authorization == nil, let stored = (try? storage.currentCredentials(for: identity)) ?? nil,
           stored.endpoints.issuer == configuration.issuer {
            return stored.endpoints
        }
        return nil
    }

    /// The endpoints already discovered in this process for this provider, by any client (no network).
    var knownEndpoints: ProviderEndpoints? { DiscoveryCache.shared.endpoints(for: configuration) }

    /// Whether the provider, as discovered in this process, offers the device flow (nil: not discovered yet).
    package var offersDeviceFlow: Bool? { knownEndpoints.map { $0.deviceAuthorization != nil } }

    /// The provider's userinfo for an access token at `endpoints` (see `SignInUser.userInfo()`).
    func userInfo(accessToken: String, tokenType: String = "Bearer", proofKey: ProofKey? = nil, endpoints: ProviderEndpoints) async throws(SignInError) -> [String: JSONValue] {
        try await offPool("the userinfo request") { (_) throws(SignInError) -> [String: JSONValue] in
            var tokens = TokenClient(config: self.configuration, endpoints: endpoints)
            tokens.proofKey = proofKey
            return try tokens.userinfo(accessToken: accessToken, tokenType: tokenType)
        }
    }

    /// A sign-in whose progress arrives as an `AsyncSequence`, in order, ending when the sign-in ends; iterate it
    /// from any actor (a `@MainActor` UI included). `user` is the sign-in itself: await its `value`, or cancel it.
    /// Cancelling the task that iterates `events`, or one that awaits `user.value`, cancels the sign-in too (a
    /// SwiftUI `.task` that goes away leaves nothing running): `value` then throws `.canceled`.
    public func signInWithEvents(hint: String? = nil, additionalScopes: [String] = [], options: SignInOptions = SignInOptions())
        -> (events: AsyncStream<SignInEvent>, user: SignInOperation<SignInUser>) {
        let (stream, continuation) = AsyncStream<SignInEvent>.makeStream(bufferingPolicy: .unbounded)
        let task = Task { () async -> Result<SignInUser, SignInError> in
            defer { continuation.finish() }
            do throws(SignInError) {
                return .success(try await self.signIn(hint: hint, additionalScopes: additionalScopes, options: options) { continuation.yield($0) })
            } catch {
                return .failure(error)
            }
        }
        // The consumer went away (its task was cancelled, or it dropped the stream) before the end: so does the sign-in.
        continuation.onTermination = { termination in
            if case .cancelled = termination { task.cancel() }
        }
        return (stream, SignInOperation(task: task))
    }

    /// The current user now, then again each time it changes (nil: no one is signed in). For a UI that shows who
    /// is signed in without re-reading. What is said, and from where:
    /// - a sign-in, a sign-out, a switch of account, new scopes: through this client, at once;
    /// - a refresh that replaced the tokens (a new `accessToken`), and a token an API refused
    ///   (`accessTokenRejected`): through this client, at once;
    /// - the provider ended the grant (a refresh got `invalid_grant`): the user again, with `grantEndedAt` set (it
    ///   can no longer be restored: show it as signed out, and offer to sign in);
    /// - any of these by another `SignInClient` or another process (the `signin` command) on the same file store:
    ///   within about 50 ms, the store folder being watched (inotify) while anyone iterates this stream.
    /// Consecutive equal states are said once.
    public func currentUserUpdates() -> AsyncStream<SignInUser?> {
        let (stream, continuation) = AsyncStream<SignInUser?>.makeStream(bufferingPolicy: .bufferingNewest(8))
        let now = currentUser
        continuation.yield(now)
        let id = observers.add(continuation, first: now)
        continuation.onTermination = { [weak self] _ in self?.observers.remove(id) }
        if let store = credentialStore {
            // Weak: the watcher's thread must not keep a client alive that its program let go of.
            observers.startWatching { () -> StoreWatcher? in
                StoreWatcher(directory: store.directory) { [weak self] in self?.currentUserChanged() }
            }
        }
        return stream
    }

    /// Tells the observers, if there are any (reading the current user costs a store read, which the command line's
    /// refresh path has no use for).
    func currentUserChanged() {
        // What this client changed is never answered from memory, even before the folder's watcher wakes.
        resident?.changed()
        guard observers.isWatched else { return }
        observers.send(currentUser)
    }
}

extension SignInError {
    /// The provider refused the stored grant on `date` (revoked, expired, or a reused refresh token). A factory,
    /// not a case: match the error with `case .noPreviousSignIn(.grantEnded(let date))`.
    @available(*, deprecated, message: "throw .noPreviousSignIn(reason: .grantEnded(on:)), and match `case .noPreviousSignIn(.grantEnded)`: this factory looks like a case and cannot be matched")
    public static func grantEnded(on date: Date) -> SignInError {
        .noPreviousSignIn(reason: .grantEnded(on: date))
    }
}

/// Who watches `currentUserUpdates()`, what each was last told, and the store watcher while anyone watches.
final class CurrentUserObservers: Sendable {
    private struct Observer {
        let id: Int
        let continuation: AsyncStream<SignInUser?>.Continuation
        var last: SignInUser.State?
    }
    private struct Watchers {
        var list: [Observer] = []
        var nextID = 0
        var watcher: StoreWatcher?
    }
    private let state = Locked(Watchers())

    func add(_ c: AsyncStream<SignInUser?>.Continuation, first: SignInUser?) -> Int {
        state.withLock { s in
            s.nextID += 1
            s.list.append(Observer(id: s.nextID, continuation: c, last: first?.state))
            return s.nextID
        }
    }

    func remove(_ id: Int) {
        let idle: StoreWatcher? = state.withLock { s in
            s.list.removeAll { $0.id == id }
            guard s.list.isEmpty else { return nil }
            defer { s.watcher = nil }
            return s.watcher
        }
        idle?.stop()
    }

    var isWatched: Bool { state.withLock { !$0.list.isEmpty } }

    /// Starts the store watcher unless one runs.
    func startWatching(_ make: () -> StoreWatcher?) {
        state.withLock { s in if s.watcher == nil && !s.list.isEmpty { s.watcher = make() } }
    }

    func send(_ user: SignInUser?) {
        let next = user?.state
        state.withLock { s in
            for i in s.list.indices where s.list[i].last != next {
                s.list[i].last = next
                _ = s.list[i].continuation.yield(user)
            }
        }
    }
}
