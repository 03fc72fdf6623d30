import SignInBase
import SignInProtocol
import FoundationEssentials

/// The account and configuration locks.
extension CredentialStore {
    /// Runs `body` holding an exclusive lock on one account, so that one process refreshes it while others wait.
    /// Different accounts never wait on each other. The lock is released when the process dies.
    package func withLock<T>(issuer: String, clientID: String, subject: String, _ body: () throws(SignInError) -> T) throws(SignInError) -> T {
        try checkDirectory(create: true)
        guard let o = try open() else { return try withConfigurationLock(body) }
        return try FileLock.with(entryPath(o, issuer: issuer, clientID: clientID, subject: subject) + ".lock", body)
    }

    /// Runs `body` holding the lock under which current-account pointers change and older stores are carried over.
    func withConfigurationLock<T>(_ body: () throws(SignInError) -> T) throws(SignInError) -> T {
        try checkDirectory(create: true)
        return try FileLock.with(accountsLockPath, body)
    }
}
