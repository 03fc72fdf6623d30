import SignInBase
import SignInProtocol
import SignInStorage
import SignInGrant
import SignInTransport
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Restore and refresh: the silent path, no browser (`restorePreviousSignIn`, `restore`).
extension SignInClient {
    // MARK: Restore and refresh

    /// Restores the previous sign-in without a browser, refreshing the tokens when the access token expires
    /// within `minimumValidity` (or always when `forceRefresh`). See `restore(minimumValidity:forceRefresh:)`.
    nonisolated(nonsending) public func restorePreviousSignIn(account: String? = nil, minimumValidity: Duration = .seconds(60), forceRefresh: Bool = false,
                                      token: TokenKind = .access) async throws(SignInError) -> SignInUser {
        // A long-running program's cached call: answered from memory while the store's folder is unchanged
        // (`ResidentCredentials`): no thread, no file, no system call.
        if !forceRefresh, let (kept, isCurrent) = resident?.lookup(account), kept.grantEndedAt == nil,
           isFresh(kept, minimumValidity: minimumValidity, token: token) {
            return SignInUser(kept, client: self, isCurrent: isCurrent)
        }
        let generation = resident?.beginRead()
        let (entry, isCurrent) = try await offPool("the refresh") { (_) throws(SignInError) -> (StoredCredentials, Bool) in
            try self.restoreEntry(account: account, minimumValidity: minimumValidity, forceRefresh: forceRefresh, token: token)
        }
        if let generation { resident?.keep(account, entry, isCurrent: isCurrent, generation: generation) }
        return SignInUser(entry, client: self, isCurrent: isCurrent)
    }

    /// The synchronous body of `restorePreviousSignIn`, for callers that are not async (the CLI's cached path).
    ///
    /// 1. The account: `account` (an e-mail or `sub`) when given, else the current one. Nothing stored, or no
    ///    account current: `.noPreviousSignIn`.
    /// 2. The provider ended the grant (remembered from an earlier refresh): `.noPreviousSignIn` at once, no request.
    /// 3. The token asked for (`token`: the access token, or the ID token) is valid for `minimumValidity` more
    ///    and no refresh is forced: the stored user, with no network and no lock.
    /// 4. Otherwise, under this account's lock (other accounts do not wait), read again: another process may have
    ///    refreshed meanwhile (with a rotating provider, the refresh token we read first is already spent). Its
    ///    fresh result is used as is; else this process refreshes (`refreshLocked`). Many parallel callers so
    ///    cause one refresh. When the ID token was asked for and the refresh brought none, that is an error
    ///    (`.noPreviousSignIn`: only a new sign-in gives one), after the refreshed tokens are saved.
    public func restore(account: String? = nil, minimumValidity: Duration = .seconds(60), forceRefresh: Bool = false,
                        token: TokenKind = .access) throws(SignInError) -> SignInUser {
        let (entry, isCurrent) = try restoreEntry(account: account, minimumValidity: minimumValidity, forceRefresh: forceRefresh, token: token)
        return SignInUser(entry, client: self, isCurrent: isCurrent)
    }

    /// `restore`'s decision, answering the entry and whether its account is the current one.
    func restoreEntry(account: String?, minimumValidity: Duration, forceRefresh: Bool, token: TokenKind) throws(SignInError) -> (StoredCredentials, Bool) {
        guard let cached = try credentials(account: account) else { throw noAccount() }
        let isCurrent = account == nil || cached.profile.userID == (try? currentSubject())
        if let ended = cached.grantEndedAt { throw .noPreviousSignIn(reason: .grantEnded(on: ended)) }
        if !forceRefresh && isFresh(cached, minimumValidity: minimumValidity, token: token) { return (cached, isCurrent) }
        let seen = cached.accessToken
        let subject = cached.profile.userID
        return try storage.withExclusiveAccess(for: identity, subject: subject) { () throws(SignInError) -> (StoredCredentials, Bool) in
            guard let current = try storage.credentials(for: identity, subject: subject) else {
                throw .noPreviousSignIn(reason: .signedOutMeanwhile)
            }
            if let ended = current.grantEndedAt { throw .noPreviousSignIn(reason: .grantEnded(on: ended)) }
            let someoneElseRefreshed = current.accessToken != seen
            if isFresh(current, minimumValidity: minimumValidity, token: token) && (!forceRefresh || someoneElseRefreshed) {
                return (current, isCurrent)
            }
            let next = try refreshLocked(current)
            if token == .id && next.idToken == current.idToken {
                throw .noPreviousSignIn(reason: .noNewIDToken(storedExpiry: next.idTokenExpiry))
            }
            return (next, isCurrent)
        }
    }

    /// Refreshes the tokens of `current`; the caller holds the account's lock.
    ///
    /// 1. No refresh token stored: `.noPreviousSignIn` (the provider issued none).
    /// 2. Before the request, what its save needs is secured (`CredentialStore.withSecuredSave`: the key read once and
    ///    kept, room on disk allocated; no room: `.storeUnwritable` and nothing is sent). From sending the request
    ///    until its answer is saved, SIGINT, SIGTERM and SIGHUP are held and a task's cancellation waits (`CriticalSection`).
    /// 3. The provider refuses the grant (`invalid_grant`): that and its date are saved in the entry (nothing is
    ///    deleted), then `.noPreviousSignIn`. Any other failure changes nothing.
    /// 4. A rotated refresh token is saved before anything else can fail, since the old one is already spent: when the
    ///    answer itself is refused (a malformed member beside it), before the refusal is thrown; at once
    ///    when an ID token is to be verified first (that may fail, or need the network for the keys), else with the
    ///    new tokens in the one save of step 6 (nothing can fail between).
    /// 5. A new ID token must verify and name the same account (`sub`); profile fields it lacks are kept.
    /// 6. The new tokens are saved. A save that still fails after the provider rotated is `.rotatedGrantUnsaved`
    ///    (the old refresh token is spent: "previous credentials are intact" would not be true).
    /// With `resource`: the refresh asks for an access token for that resource alone (RFC 8707); it is kept in the
    /// entry's cache under `DerivedTokenKey.resource` and the person's own access token is left as it was.
    func refreshLocked(_ current: StoredCredentials, resource: String? = nil) throws(SignInError) -> StoredCredentials {
        guard let refreshToken = current.refreshToken else {
            throw .noPreviousSignIn(reason: .noRefreshToken)
        }
        var tokens = TokenClient(config: configuration, endpoints: current.endpoints)
        tokens.proofKey = try current.proofKey()
        // The network first: in the static half this hands the run over before anything is reserved on disk.
        try HTTPClient.loadLibrary()
        // Step 2: the save secured before the request (the store's own files: the key read once and kept, room on
        // disk allocated); another storage saves as it does.
        guard let store = storage as? CredentialStore else {
            return try refreshLocked(current, refreshToken, tokens, resource: resource, save: { (c) throws(SignInError) in try storage.save(c) })
        }
        return try store.withSecuredSave(of: current) { (secured) throws(SignInError) -> StoredCredentials in
            try refreshLocked(current, refreshToken, tokens, resource: resource, save: { (c) throws(SignInError) in try store.save(c, secured) })
        }
    }

    private func refreshLocked(_ current: StoredCredentials, _ refreshToken: String, _ tokens: TokenClient, resource: String?,
                               save: (StoredCredentials) throws(SignInError) -> Void) throws(SignInError) -> StoredCredentials {
        // A save that fails once the provider has rotated says so: the old refresh token is spent.
        func saveRotated(_ c: StoredCredentials) throws(SignInError) {
            do throws(SignInError) { try save(c) } catch {
                guard c.refreshToken != current.refreshToken, case .storeUnwritable(let path, let reason) = error else { throw error }
                throw .rotatedGrantUnsaved(path: path, reason: reason)
            }
        }
        return try CriticalSection.run { () throws(SignInError) -> StoredCredentials in
            let response: TokenResponse
            do throws(SignInError) {
                response = try tokens.refresh(refreshToken, resource: resource ?? configuration.grantAPI, keepRotated: { (rotated) throws(SignInError) in
                    // The answer is refused, but the refresh token it rotated to is the grant now: saved first.
                    var kept = current
                    kept.refreshToken = rotated
                    kept.savedAt = Date()
                    try saveRotated(kept)
                    currentUserChanged()
                })
            } catch where error.isGrantRefused {
                // Under the lock we sent the newest refresh token, so the refusal is about the grant itself.
                var ended = current
                ended.grantEndedAt = Date()
                try save(ended)
                currentUserChanged()
                throw .noPreviousSignIn(reason: .grantEnded(on: ended.grantEndedAt!))
            }
            var next = current
            next.refreshToken = response.refreshToken ?? current.refreshToken
            if next.refreshToken != current.refreshToken && response.idToken != nil { try saveRotated(next) }
            if let raw = response.idToken, current.endpoints.issuesIDTokens {
                let verified = try verifyIDToken(raw, endpoints: current.endpoints, nonce: nil)
                guard verified.subject == current.profile.userID else {
                    throw .invalidIDToken(reason: "the refreshed ID token is for another account (sub changed)")
                }
                var profile = verified.profile
                profile.fillMissing(from: current.profile)
                next.profile = profile
                next.idToken = raw
                next.idTokenExpiry = verified.expiry
            }
            let expiry = response.expiresIn.map { Date(timeIntervalSinceNow: TimeInterval($0)) }
            if let resource {
                // A token for one API: beside the person's, with its own expiry (none said: used once, not kept).
                let unrestricted = Self.evidentlyUnrestricted(response.accessToken, for: resource, grantsOwn: current.accessToken)
                next.keep(.resource(resource), value: response.accessToken, expiry: expiry ?? Date(), unrestricted: unrestricted ? true : nil)
            } else {
                next.accessToken = response.accessToken
                next.accessTokenType = response.tokenType == "DPoP" ? "DPoP" : nil
                next.accessTokenRejectedAt = nil
                next.accessTokenExpiry = expiry
                next.accessTokenLifetime = response.expiresIn.map(Double.init)
                if let scope = response.scope { next.grantedScopes = scope }
            }
            next.savedAt = Date()
            try saveRotated(next)
            currentUserChanged()
            return next
        }
    }
}

extension SignInClient {
    /// Whether a token asked for `target` alone is evidently not restricted to it: the grant's own access token
    /// again, or a JWT whose `aud` (a string or a list) does not name `target`. An opaque token says nothing, so it is
    /// taken as asked (nothing can be told without the provider).
    package static func evidentlyUnrestricted(_ token: String, for target: String, grantsOwn: String?) -> Bool {
        if token == grantsOwn { return true }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let payload = Base64URL.decode(String(parts[1])), let claims = JSONValue.object(from: Data(payload)) else { return false }
        switch claims["aud"] {
        case .string(let aud)?: return aud != target
        case .array(let auds)?: return !auds.contains { $0.string == target }
        default: return false
        }
    }
}
