import Foundation
import Testing
@testable import SignInKit

@Suite struct CredentialStoreTests {
    let dir: String
    let store: CredentialStore

    init() throws {
        dir = NSTemporaryDirectory() + "signin-store-\(UUID().uuidString)/signin"
        store = CredentialStore(directory: dir)
    }

    func creds(issuer: String = "https://i.example", client: String = "c", refresh: String = "rt-secret") -> StoredCredentials {
        StoredCredentials(issuer: issuer, clientID: client, refreshToken: refresh, accessToken: "at-secret", accessTokenExpiry: Date(timeIntervalSince1970: 2_000_000_000),
                          idToken: "id", idTokenExpiry: nil, profile: Profile(userID: "alice", name: "Alice", email: "alice@example.org"),
                          grantedScopes: ["openid"], endpoints: Endpoints(issuer: issuer, authorization: "https://a", token: "https://t", jwks: "https://j"),
                          savedAt: Date(timeIntervalSince1970: 1_900_000_000))
    }

    func unreadable(_ body: () throws -> Void) -> String? {
        do {
            try body()
            return nil
        } catch let e as SignInError {
            if case .storeUnreadable(_, let reason) = e { return reason }
            return "other: \(e)"
        } catch { return "other: \(error)" }
    }

    @Test func roundTripEncryptedWithModes() throws {
        let c = creds()
        try store.save(c)
        #expect(try store.load(issuer: c.issuer, clientID: c.clientID) == c)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: store.entryPath(issuer: c.issuer, clientID: c.clientID)))
        #expect(!bytes.contains("rt-secret") && !bytes.contains("at-secret") && !bytes.contains("alice"))
        #expect(try FileManager.default.attributesOfItem(atPath: dir)[.posixPermissions] as? Int == 0o700)
        #expect(try FileManager.default.attributesOfItem(atPath: dir + "/key")[.posixPermissions] as? Int == 0o600)
        #expect(try store.load(issuer: c.issuer, clientID: "other") == nil)
    }

    @Test func everyFlippedBitIsAClearErrorAndTheFileStaysUntouched() throws {
        let c = creds()
        try store.save(c)
        let path = store.entryPath(issuer: c.issuer, clientID: c.clientID)
        let original = try Data(contentsOf: URL(fileURLWithPath: path))
        for i in stride(from: 0, to: original.count * 8, by: 37) {
            var damaged = original
            damaged[i / 8] ^= UInt8(1 << (i % 8))
            try damaged.write(to: URL(fileURLWithPath: path))
            let reason = unreadable { _ = try store.load(issuer: c.issuer, clientID: c.clientID) }
            #expect(reason != nil && reason?.contains("left as is") == true, "bit \(i): \(reason ?? "accepted")")
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == damaged)
        }
    }

    @Test func truncatedEmptyBinaryWrongVersionAndSwappedFilesAreRefused() throws {
        let a = creds(client: "a"), b = creds(client: "b", refresh: "rt-b")
        try store.save(a)
        try store.save(b)
        let pa = store.entryPath(issuer: a.issuer, clientID: a.clientID), pb = store.entryPath(issuer: b.issuer, clientID: b.clientID)
        let good = try Data(contentsOf: URL(fileURLWithPath: pa))
        var versioned = good
        versioned[4] = 9
        for bad in [Data(), good.prefix(20), good.prefix(good.count - 1), Data((0..<300).map { UInt8($0 % 256) }), versioned] {
            try bad.write(to: URL(fileURLWithPath: pa))
            #expect(unreadable { _ = try store.load(issuer: a.issuer, clientID: a.clientID) } != nil)
        }
        // b's file copied over a's: authenticated data binds the entry to its account.
        try FileManager.default.removeItem(atPath: pa)
        try FileManager.default.copyItem(atPath: pb, toPath: pa)
        #expect(unreadable { _ = try store.load(issuer: a.issuer, clientID: a.clientID) }?.contains("another account") == true)
    }

    @Test func keyProblemsAreRefusedWithAFix() throws {
        let c = creds()
        try store.save(c)
        chmod(dir + "/key", 0o644)
        #expect(unreadable { _ = try store.load(issuer: c.issuer, clientID: c.clientID) }?.contains("chmod 600") == true)
        chmod(dir + "/key", 0o600)
        let key = try Data(contentsOf: URL(fileURLWithPath: dir + "/key"))
        try Data(repeating: 7, count: 32).write(to: URL(fileURLWithPath: dir + "/key"))  // a wrong key
        #expect(unreadable { _ = try store.load(issuer: c.issuer, clientID: c.clientID) } != nil)
        try FileManager.default.removeItem(atPath: dir + "/key")
        #expect(unreadable { _ = try store.load(issuer: c.issuer, clientID: c.clientID) }?.contains("missing") == true)
        try key.write(to: URL(fileURLWithPath: dir + "/key"))
        chmod(dir + "/key", 0o600)
        #expect(try store.load(issuer: c.issuer, clientID: c.clientID) == c)
    }

    @Test func folderOwnedBySomeoneElseIsRefused() throws {
        let c = creds()
        try store.save(c)
        guard geteuid() == 0 else {
            // Not root: a folder owned by root (and open to all) stands in for one owned by someone else.
            #expect(unreadable { _ = try CredentialStore(directory: "/tmp").load(issuer: c.issuer, clientID: c.clientID) }?.contains("chown") == true)
            return
        }
        chown(dir, 65534, 65534)
        #expect(unreadable { _ = try store.load(issuer: c.issuer, clientID: c.clientID) }?.contains("chown") == true)
        chown(dir, 0, 0)
        #expect(try store.load(issuer: c.issuer, clientID: c.clientID) == c)
    }

    @Test func openFolderAndSymlinksAreRefused() throws {
        let c = creds()
        try store.save(c)
        chmod(dir, 0o777)
        #expect(unreadable { _ = try store.load(issuer: c.issuer, clientID: c.clientID) }?.contains("chmod 700") == true)
        chmod(dir, 0o700)
        // A symlinked folder (someone pointing the store elsewhere) is refused.
        let link = dir + "-link"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: dir)
        #expect(unreadable { _ = try CredentialStore(directory: link).load(issuer: c.issuer, clientID: c.clientID) }?.contains("symbolic link") == true)
        // A symlinked entry file is refused, not followed.
        let path = store.entryPath(issuer: c.issuer, clientID: c.clientID)
        try FileManager.default.moveItem(atPath: path, toPath: path + ".real")
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: path + ".real")
        #expect(unreadable { _ = try store.load(issuer: c.issuer, clientID: c.clientID) }?.contains("symbolic link") == true)
    }
}

extension Data {
    func contains(_ s: String) -> Bool { range(of: Data(s.utf8)) != nil }
}
