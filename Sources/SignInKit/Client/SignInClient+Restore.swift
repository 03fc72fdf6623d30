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
           TokenUseCase.isFresh(kept, minimumValidity: minimumValidity, token: token, now: Date()) {
            return SignInUser(kept, client: self, isCurrent: isCurrent)
        }
        let generation = resident?.beginRead()
        let (entry, isCurrent) = try await offPool("the refresh") { (_) throws(SignInError) -> (StoredCredentials, Bool) in
            try self.tokenUseCase.restoreEntry(account: account, minimumValidity: minimumValidity, forceRefresh: forceRefresh, token: token)
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
        let (entry, isCurrent) = try tokenUseCase.restoreEntry(account: account, minimumValidity: minimumValidity, forceRefresh: forceRefresh, token: token)
        return SignInUser(entry, client: self, isCurrent: isCurrent)
    }
}
