import SignInBase
import SignInProtocol
import SignInStorage
import SignInGrant
import SignInTransport
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// The accounts a client knows, offline: who is stored, who is current, switching, and marking a token rejected.
extension SignInClient {
    // MARK: Accounts (offline)

    /// The current account's stored user, without network (also when the provider has ended its grant: see
    /// `SignInUser.grantEndedAt`); with `account` (an e-mail or `sub`), that account's. Nil when nothing is stored or no
    /// account is current. Throws when the store cannot be trusted, or `account` names no account or several.
    public func storedUser(account: String? = nil) throws(SignInError) -> SignInUser? {
        guard let c = try credentials(account: account) else { return nil }
        return SignInUser(c, client: self, isCurrent: account == nil || c.profile.userID == (try? currentSubject()))
    }

    /// `storedUser(account:)`, but no user is an error that says why: nothing stored, or accounts stored and
    /// none current (the same error `restorePreviousSignIn()` throws).
    public func signedInUser(account: String? = nil) throws(SignInError) -> SignInUser {
        guard let user = try storedUser(account: account) else { throw noAccount() }
        return user
    }

    /// The current user, or nil (also when the store is unreadable; use `storedUser()` to learn why).
    ///
    /// Which to use: `currentUser` to show who is signed in (a UI; `currentUserUpdates()` to follow it);
    /// `storedUser(account:)` when an unreadable store or a wrong account name must be told apart from "no one";
    /// `signedInUser(account:)` when no one signed in is an error to report. None of them touches the network;
    /// for tokens, `restorePreviousSignIn()` or the user's `freshToken()`.
    public var currentUser: SignInUser? { try? storedUser() }

    /// Whether a previous sign-in of the current account is stored that `restorePreviousSignIn()` can use without
    /// a browser: false when nothing is stored, no account is current, the store cannot be read, or the provider
    /// has ended the grant.
    public var hasPreviousSignIn: Bool {
        guard let c = try? storage.currentCredentials(for: identity), c.grantEndedAt == nil else { return false }
        return c.refreshToken != nil || TokenUseCase.isFresh(c, minimumValidity: .zero, token: .access, now: Date())
    }

    /// Every account signed in with this configuration, the current one marked (`SignInUser.isCurrent`).
    public func accounts() throws(SignInError) -> [SignInUser] {
        let current = try currentSubject()
        return try allCredentials().map { SignInUser($0, client: self, isCurrent: $0.profile.userID == current) }
    }

    /// Makes `account` (an e-mail or `sub`) the current account: the one `restorePreviousSignIn()`, `currentUser`
    /// and the CLI's commands use when no account is named.
    @discardableResult
    public func switchAccount(to account: String) throws(SignInError) -> SignInUser {
        let c = try resolve(account)
        try storage.withExclusiveAccess(for: identity, subject: nil) { () throws(SignInError) in
            try storage.makeCurrent(subject: c.profile.userID, for: identity)
        }
        currentUserChanged()
        return SignInUser(c, client: self, isCurrent: true)
    }

    func currentSubject() throws(SignInError) -> String? {
        try storage.currentCredentials(for: identity)?.profile.userID
    }

    func allCredentials() throws(SignInError) -> [StoredCredentials] {
        try storage.allCredentials(for: identity)
    }

    /// The credentials `account` names (e-mail, case-insensitive, or `sub`), else the current account's: the entry
    /// itself, secrets and all, for a provider family (`PersonGrant`); a program wants `restore` or `token`.
    public func credentials(account: String?) throws(SignInError) -> StoredCredentials? {
        try tokenUseCase.credentials(account: account)
    }

    /// The one stored account `account` names; an error listing what is stored when it names none or several.
    func resolve(_ account: String) throws(SignInError) -> StoredCredentials {
        try tokenUseCase.resolve(account)
    }

    /// Why there is no account to use: nothing stored, or accounts stored but none current.
    public func noAccount() -> SignInError {
        tokenUseCase.noAccount()
    }

    /// Makes the next `restore` refresh before handing out an access token: for a caller told by an API that the
    /// token was rejected (git's `erase`). Only when `rejected` is the stored access token (compared in constant
    /// time), so a late report about an older token changes nothing.
    public func markAccessTokenRejected(_ rejected: String, account: String? = nil) throws(SignInError) {
        guard let c = try credentials(account: account) else { return }
        let subject = c.profile.userID
        try storage.withExclusiveAccess(for: identity, subject: subject) { () throws(SignInError) in
            guard var current = try storage.credentials(for: identity, subject: subject),
                  let token = current.accessToken, Crypto.constantTimeEqual(token, rejected) else { return }
            current.accessTokenRejectedAt = Date()
            try storage.save(current)
        }
        currentUserChanged()
    }
}
