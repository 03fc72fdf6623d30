#if canImport(Glibc)
import SignInBase
import SignInProtocol
import Glibc
#endif

/// Credentials kept in this process's memory only: for a program's tests (seed it with `StoredCredentials`, read
/// back what the client saved) and for programs that must not keep anything once they exit.
public final class InMemoryCredentialStorage: CredentialStorage {
    private struct Scope: Hashable {
        package let issuer: String
        package let clientID: String
    }

    private struct Accounts {
        var bySubject: [String: StoredCredentials] = [:]
        package var current: String?
    }

    private let state = Locked<[Scope: Accounts]>([:])
    private let exclusive = NamedLocks()

    /// Storage holding `credentials` (the last of each client is current), or nothing.
    public init(_ credentials: [StoredCredentials] = []) {
        for c in credentials {
            save(c)
            makeCurrent(subject: c.profile.userID, for: c.identity)
        }
    }

    /// Everything stored, of every client: what the client has saved so far.
    public var storedCredentials: [StoredCredentials] {
        state.withLock { $0.values.flatMap { $0.bySubject.values } }.sorted { ($0.issuer, $0.clientID, $0.profile.userID) < ($1.issuer, $1.clientID, $1.profile.userID) }
    }

    /// Every account of this client, by e-mail then `sub`.
    public func allCredentials(for client: ClientIdentity) -> [StoredCredentials] {
        state.withLock { $0[Scope(issuer: client.issuer, clientID: client.clientID)]?.bySubject.values.map { $0 } ?? [] }
            .sorted { ($0.profile.email ?? "", $0.profile.userID) < ($1.profile.email ?? "", $1.profile.userID) }
    }

    /// One account's credentials.
    public func credentials(for client: ClientIdentity, subject: String) -> StoredCredentials? {
        state.withLock { $0[Scope(issuer: client.issuer, clientID: client.clientID)]?.bySubject[subject] }
    }

    /// The current account's credentials.
    public func currentCredentials(for client: ClientIdentity) -> StoredCredentials? {
        state.withLock { all in
            all[Scope(issuer: client.issuer, clientID: client.clientID)].flatMap { a in a.current.flatMap { a.bySubject[$0] } }
        }
    }

    /// Adds or replaces one account.
    public func save(_ credentials: StoredCredentials) {
        state.withLock { $0[Scope(issuer: credentials.issuer, clientID: credentials.clientID), default: Accounts()].bySubject[credentials.profile.userID] = credentials }
    }

    /// Makes `subject` current.
    public func makeCurrent(subject: String, for client: ClientIdentity) {
        state.withLock { $0[Scope(issuer: client.issuer, clientID: client.clientID), default: Accounts()].current = subject }
    }

    /// Removes one account, and the current mark when it was that account.
    public func removeCredentials(for client: ClientIdentity, subject: String) -> Bool {
        state.withLock { all in
            let scope = Scope(issuer: client.issuer, clientID: client.clientID)
            if all[scope]?.current == subject { all[scope]?.current = nil }
            return all[scope]?.bySubject.removeValue(forKey: subject) != nil
        }
    }

    /// Removes the current account; none is current afterwards.
    public func removeCurrentCredentials(for client: ClientIdentity) -> Bool {
        state.withLock { all in
            let scope = Scope(issuer: client.issuer, clientID: client.clientID)
            guard let current = all[scope]?.current else { return false }
            all[scope]?.current = nil
            return all[scope]?.bySubject.removeValue(forKey: current) != nil
        }
    }

    /// A mutex per account (or per client, `subject` nil) held around `body`; within this process only. A thread that
    /// holds it already runs on, as the store's file locks do.
    public func withExclusiveAccess<T>(for client: ClientIdentity, subject: String?,
                                       _ body: () throws(SignInError) -> T) throws(SignInError) -> T {
        try exclusive.with("\(client.issuer)\u{0}\(client.clientID)\u{0}\(subject.map { "account\u{0}" + $0 } ?? "configuration")", body)
    }
}
