import SignInBase
import SignInProtocol

/// Where a `SignInClient` keeps sign-ins between runs: one `StoredCredentials` per account of a client at a
/// provider (an issuer and a client ID), and which of those accounts is current.
///
/// `CredentialStore` is the library's own: encrypted files whose key is kept as `KeyCustody` says, shared safely
/// between processes (the `signin` command's). `InMemoryCredentialStorage` keeps everything in memory, for tests
/// and for programs that keep nothing. A program can supply its own (a database, another secret store).
///
/// What the client relies on:
/// - `withExclusiveAccess` serialises: with a `subject`, the refresh and save of that one account (other accounts
///   do not wait); with none, changes to which account is current and removals. The client takes the
///   configuration-wide one first when it needs both, and calls `makeCurrent`, `removeCredentials` and
///   `removeCurrentCredentials` only inside it. A thread that holds access and asks for the same again runs on: the
///   token path nests them (a derived token's retry refreshes the grant under the account's lock it holds). Storage
///   shared between processes must make this hold across them.
/// - A failure to read is thrown (`.storeUnreadable`), never reported as "nothing stored": the client then refuses
///   to overwrite what it could not read.
/// - `save` replaces an account's credentials entirely or not at all.
public protocol CredentialStorage: Sendable {
    /// Every account stored for `client`, in a stable order.
    func allCredentials(for client: ClientIdentity) throws(SignInError) -> [StoredCredentials]
    /// The credentials of the account `subject` (its `sub`), or nil when none are stored.
    func credentials(for client: ClientIdentity, subject: String) throws(SignInError) -> StoredCredentials?
    /// The current account's credentials, or nil when no account is current.
    func currentCredentials(for client: ClientIdentity) throws(SignInError) -> StoredCredentials?
    /// Adds or replaces one account's credentials (the account is `credentials.profile.userID`).
    func save(_ credentials: StoredCredentials) throws(SignInError)
    /// Makes `subject` the current account.
    func makeCurrent(subject: String, for client: ClientIdentity) throws(SignInError)
    /// Removes one account; when it was the current one, no account is current afterwards. True when it was there.
    func removeCredentials(for client: ClientIdentity, subject: String) throws(SignInError) -> Bool
    /// Removes the current account's credentials, also when they cannot be read (signing out is how a person
    /// gets rid of a damaged entry); afterwards no account is current. True when there was one.
    func removeCurrentCredentials(for client: ClientIdentity) throws(SignInError) -> Bool
    /// Runs `body` with exclusive access to one account (`subject`), or to the client's choice of current account
    /// and its removals (`subject` nil).
    func withExclusiveAccess<T>(for client: ClientIdentity, subject: String?,
                                _ body: () throws(SignInError) -> T) throws(SignInError) -> T
}
