import Foundation
import Testing
@testable import SignInKit
@testable import SignInBase
@testable import SignInTransport
@testable import SignInProtocol
@testable import SignInStorage

@Suite final class CredentialStoreTests {
    let root = NSTemporaryDirectory() + "signin-store-\(UUID().uuidString)"
    let dir: String
    let store: CredentialStore

    init() throws {
        dir = root + "/signin"
        store = CredentialStore(directory: dir)
    }

    // Each test's folder (and the key in it) goes when the test ends, passed or failed.
    deinit {
        for folder in [dir, root + "/other"] { CredentialStore(directory: folder).lock() }
        try? FileManager.default.removeItem(atPath: root)
    }

    func creds(issuer: String = "https://i.example", client: String = "c", refresh: String = "rt-secret", sub: String = "alice") -> StoredCredentials {
        StoredCredentials(issuer: issuer, clientID: client, refreshToken: refresh, accessToken: "at-secret", accessTokenExpiry: Date(timeIntervalSince1970: 2_000_000_000),
                          idToken: "id", idTokenExpiry: nil, profile: SignInProfile(userID: sub, name: sub.capitalized, email: "\(sub)@example.org"),
                          grantedScopes: ["openid"], endpoints: ProviderEndpoints(issuer: issuer, authorization: "https://a", token: "https://t", jwks: "https://j"),
                          savedAt: Date(timeIntervalSince1970: 1_900_000_000))
    }

    /// The key descriptor and the key move's journal are written and read by one codec of signin's own: each reads
    /// back exactly what it wrote, and what an earlier signin wrote with JSONEncoder reads the same.
    @Test func keyDescriptorsAndJournalsReadBackExactlyWhatWasWritten() throws {
        let enc = JSONEncoder()
        enc.outputFormatting = [.sortedKeys]
        let described = [
            StoreKey.Descriptor(storage: .secretService, id: "0123abcd", kdf: nil, wrapped: nil),
            StoreKey.Descriptor(storage: .passphrase, id: "99ff", kdf: .init(name: "scrypt", n: 1 << 17, r: 8, p: 1, salt: "c2/sdC8r"), wrapped: "d3Jh/cHBlZA=="),
            StoreKey.Descriptor(storage: .tpm, id: "77", kdf: nil, wrapped: nil, sealed: "c2VhbGVk"),
        ]
        for d in described {
            let written = try #require(JSONValue.object(from: Data(d.json.text.utf8)))
            #expect(StoreKey.Descriptor(json: written) == d)
            let earlier = try #require(JSONValue.object(from: try enc.encode(d)))
            #expect(StoreKey.Descriptor(json: earlier) == d)
            #expect(try JSONDecoder().decode(StoreKey.Descriptor.self, from: Data(d.json.text.utf8)) == d, "Codable reads what the store writes")
        }
        #expect(StoreKey.Descriptor(json: ["storage": .string("floppy"), "id": .string("x")]) == nil)
        let journals = [
            KeyMoveJournal(state: .prepared, staged: described[0]),
            KeyMoveJournal(state: .committed, staged: nil, renames: [["a.pending", "a"], ["key.pending", "key"]], removals: ["old", "key.json"], retired: described[1]),
        ]
        for j in journals {
            #expect(KeyMoveJournal(json: try #require(JSONValue.object(from: Data(j.json.text.utf8)))) == j)
            #expect(KeyMoveJournal(json: try #require(JSONValue.object(from: try enc.encode(j)))) == j)
        }
    }

    /// Format 2's names are part of the carry-over: a store written by an earlier signin must still be found.
    /// The records the API room keeps beside the entries are sealed under a keyed name: each reads back as written and
    /// is listed by its kind; one copied over another's file does not open (its name is bound into the seal); removed,
    /// it is gone. The kinds a key move renames are named from what they hold.
    @Test func recordsReadBackUnderTheirNameAndAnotherRecordsFileIsRefused() throws {
        let a = CredentialStore.Record(kind: "api", name: "https://a.example/", json: #"{"resource":"https://a.example/","authorization_servers":["https://as.example"]}"#)
        let b = CredentialStore.Record(kind: "api", name: "https://b.example/", json: #"{"resource":"https://b.example/","authorization_servers":["https://as.example"]}"#)
        try store.save(a)
        try store.save(b)
        #expect(try store.record(kind: "api", name: a.name)?["resource"]?.string == a.name)
        #expect(try store.records(kind: "api").compactMap { $0["resource"]?.string }.sorted() == [a.name, b.name])
        #expect(try store.records(kind: "registration").isEmpty && store.record(kind: "registration", name: a.name) == nil)

        let files = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(".api") }.sorted()
        #expect(files.count == 2 && !files.joined().contains("example"), "\(files)")
        try FileManager.default.removeItem(atPath: dir + "/" + files[1])
        try FileManager.default.copyItem(atPath: dir + "/" + files[0], toPath: dir + "/" + files[1])
        #expect(try store.records(kind: "api").count == 1)
        #expect(try [store.record(kind: "api", name: a.name), store.record(kind: "api", name: b.name)].compactMap { $0 }.count == 1)

        try store.removeRecord(kind: "api", name: a.name)
        try store.removeRecord(kind: "api", name: b.name)
        #expect(try store.records(kind: "api").isEmpty)

        #expect(CredentialStore.recordName(kind: "api", json: ["resource": .string("https://a.example/")]) == "https://a.example/")
        #expect(CredentialStore.recordName(kind: "registration", json: ["issuer": .string("https://as.example"), "resource": .string("https://a.example/")])
                == "https://as.example\nhttps://a.example/")
        #expect(CredentialStore.recordName(kind: "registration", json: ["issuer": .string("https://as.example")]) == "https://as.example")
        #expect(CredentialStore.recordName(kind: "current-api", json: ["resource": .string("https://a.example/")]) == nil)

        // What the last sign-out removes with the key: records of any kind, never an entry, a pointer or a lock.
        let c = String(repeating: "ab", count: 16)
        for name in ["\(c).api", "\(c).registration", "\(c).current-api"] { #expect(CredentialStore.isRecordFile(name), "\(name)") }
        for name in ["\(c).\(c).cred", "\(c).current", "\(c).lock", "\(c).\(c).cred.lock", "key", "key.json", "\(c).api.tmp-12-3", "abc.api", "\(c).", "\(c.uppercased()).api"] {
            #expect(!CredentialStore.isRecordFile(name), "\(name)")
        }
    }

    @Test func legacyEntryNamesDoNotChange() {
        #expect(StoreNames.legacyAccount(subject: "alice") == "508b2abb65a03907b7bbeb73b48da59c")
    }

    /// SipHash-2-4 against the reference vectors (key 00..0f): 128-bit output of the empty message and of 00..0e.
    @Test func sipHashMatchesTheReference() {
        let key = (0..<16).map { UInt8($0) }
        #expect(Hex.encode(SipHash.hash128(key: key, [])) == "a3817f04ba25a8e66df67214c7550293")
        #expect(Hex.encode(SipHash.hash128(key: key, (0..<15).map { UInt8($0) })) == "5493e99933b0a8117e08ec0f97cfc3d9")
    }

    /// Without the key, a file name confirms nothing: names are keyed, so two stores name the same account and
    /// provider differently, and neither name is the unkeyed hash anyone could compute from a guess.
    @Test func fileNamesSayNothingWithoutTheKey() throws {
        let c = creds()
        try store.save(c)
        let other = CredentialStore(directory: root + "/other")
        try other.save(c)
        let here = try store.entryPath(issuer: c.issuer, clientID: c.clientID, subject: "alice")
        let there = try other.entryPath(issuer: c.issuer, clientID: c.clientID, subject: "alice")
        let nameHere = String(here.split(separator: "/").last!), nameThere = String(there.split(separator: "/").last!)
        #expect(nameHere != nameThere)
        let guessed = StoreNames.legacyConfiguration(issuer: c.issuer, clientID: c.clientID) + "." + StoreNames.legacyAccount(subject: "alice") + ".cred"
        for name in try FileManager.default.contentsOfDirectory(atPath: dir) {
            #expect(!name.contains(StoreNames.legacyConfiguration(issuer: c.issuer, clientID: c.clientID)) && name != guessed, "\(name)")
        }
    }

    /// A format 2 store (unkeyed names) is carried over: its accounts and its current pointer, nothing lost.
    @Test func aVersion2StoreIsCarriedOverToKeyedNames() throws {
        let alice = creds(), bob = creds(refresh: "rt-bob", sub: "bob")
        try store.save(creds(client: "make-the-key"))
        let key = Array(try Data(contentsOf: URL(fileURLWithPath: dir + "/key")))
        let enc = JSONEncoder()
        enc.dateEncodingStrategy = .secondsSince1970
        let legacyC = StoreNames.legacyConfiguration(issuer: alice.issuer, clientID: alice.clientID)
        for c in [alice, bob] {
            let sealed = try Crypto.seal(Array(try enc.encode(c)), key: key, aad: EntryFile.aad(version: 2, issuer: c.issuer, clientID: c.clientID))
            try Data(EntryFile(version: 2, sealed: sealed).bytes).write(to: URL(fileURLWithPath: dir + "/\(legacyC).\(StoreNames.legacyAccount(subject: c.profile.userID)).cred"))
        }
        try Data((StoreNames.legacyAccount(subject: "bob") + "\n").utf8).write(to: URL(fileURLWithPath: dir + "/\(legacyC).current"))
        #expect(try store.current(issuer: alice.issuer, clientID: alice.clientID) == bob)
        #expect(try store.accounts(issuer: alice.issuer, clientID: alice.clientID) == [alice, bob])
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).allSatisfy { !$0.hasPrefix(legacyC) })
    }

    /// The store reads entries with signin's own parser: it must read back exactly what JSONEncoder wrote, every
    /// field set or none, and refuse a member of the wrong type as the decoder did.
    @Test func entriesReadBackExactlyWhatWasWritten() throws {
        var full = creds()
        full.idTokenExpiry = Date(timeIntervalSince1970: 2_000_000_123.25)
        full.profile = SignInProfile(userID: "alice", name: "Ålice \"Q\" Example", givenName: "Ålice", familyName: "Example", email: "a@example.org",
                                     emailVerified: true, picture: "https://p.example/a.png?x=1&y=/2", hostedDomain: "example.org")
        full.endpoints = ProviderEndpoints(issuer: "https://i.example", authorization: "https://a", token: "https://t", jwks: "https://j",
                                           revocation: "https://r", userinfo: "https://u", deviceAuthorization: "https://d", issuerParameterSupported: false)
        full.grantedScopes = ["openid", "email", "https://www.googleapis.com/auth/drive"]
        full.grantEndedAt = Date(timeIntervalSince1970: 1_950_000_000.5)
        var sparse = creds()
        sparse.refreshToken = nil
        sparse.accessToken = nil
        sparse.accessTokenExpiry = nil
        sparse.idToken = nil
        sparse.profile = SignInProfile(userID: "bob")
        let enc = JSONEncoder()
        enc.dateEncodingStrategy = .secondsSince1970
        full.derivedTokens = [StoredCredentials.DerivedToken(key: "resource|https://api.example/", value: "t", expiry: Date(timeIntervalSince1970: 1_900_000_000.125), unrestricted: true)]
        full.accessTokenLifetime = 3599.5
        full.dpopKey = "key"
        full.accessTokenType = "DPoP"
        full.identitySource = "userinfo"
        full.endpoints.tokenEndpointAuthMethods = ["client_secret_post"]
        full.endpoints.grantTypesSupported = ["authorization_code", "refresh_token"]
        let dec = JSONDecoder()
        dec.dateDecodingStrategy = .secondsSince1970
        for c in [full, sparse] {
            // The store's one codec reads what it writes, what an earlier signin wrote with JSONEncoder, and writes
            // what a program's own Codable storage reads.
            let json = try #require(JSONValue.object(from: try enc.encode(c)))
            #expect(StoredCredentials(json: json) == c)
            let written = try c.entryPlaintext()
            #expect(StoredCredentials(json: try #require(JSONValue.object(from: Data(written)))) == c)
            #expect(try dec.decode(StoredCredentials.self, from: Data(written)) == c)
        }
        var wrong = try #require(JSONValue.object(from: try enc.encode(full)))
        wrong["grantedScopes"] = .string("openid")
        #expect(StoredCredentials(json: wrong) == nil)
        wrong = try #require(JSONValue.object(from: try enc.encode(full)))
        wrong["savedAt"] = nil
        #expect(StoredCredentials(json: wrong) == nil)
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

    @Test func anotherAccountsFileInPlaceOfThisOnesIsRefused() throws {
        let alice = creds(), bob = creds(refresh: "rt-bob", sub: "bob")
        try store.save(alice)
        try store.save(bob)
        let pa = try store.entryPath(issuer: alice.issuer, clientID: alice.clientID, subject: "alice")
        let pb = try store.entryPath(issuer: bob.issuer, clientID: bob.clientID, subject: "bob")
        try FileManager.default.removeItem(atPath: pa)
        try FileManager.default.copyItem(atPath: pb, toPath: pa)
        #expect(unreadable { _ = try store.load(issuer: alice.issuer, clientID: alice.clientID, subject: "alice") }?.contains("another account") == true)
    }

    /// A store written by the previous version (one file per configuration) is carried over on first use with
    /// its tokens intact, and the account becomes current.
    @Test func aVersion1StoreIsCarriedOver() throws {
        let old = creds()
        try writeVersion1(old)
        let current = try store.current(issuer: old.issuer, clientID: old.clientID)
        #expect(current == old)
        #expect(!FileManager.default.fileExists(atPath: store.legacyVersion1Path(issuer: old.issuer, clientID: old.clientID)))
        #expect(try store.accounts(issuer: old.issuer, clientID: old.clientID) == [old])
    }

    /// What the previous version wrote: format 1, associated data without the account.
    func writeVersion1(_ c: StoredCredentials) throws {
        try store.save(creds(client: "make-the-key"))  // creates the folder and the key
        let key = Array(try Data(contentsOf: URL(fileURLWithPath: dir + "/key")))
        let enc = JSONEncoder()
        enc.dateEncodingStrategy = .secondsSince1970
        let sealed = try Crypto.seal(Array(try enc.encode(c)), key: key, aad: EntryFile.aad(version: 1, issuer: c.issuer, clientID: c.clientID))
        try Data(EntryFile(version: 1, sealed: sealed).bytes).write(to: URL(fileURLWithPath: store.legacyVersion1Path(issuer: c.issuer, clientID: c.clientID)))
    }

    @Test func roundTripEncryptedWithModes() throws {
        let c = creds()
        try store.save(c)
        #expect(try store.load(issuer: c.issuer, clientID: c.clientID, subject: "alice") == c)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: try store.entryPath(issuer: c.issuer, clientID: c.clientID, subject: "alice")))
        #expect(!bytes.contains("rt-secret") && !bytes.contains("at-secret") && !bytes.contains("alice"))
        #expect(try FileManager.default.attributesOfItem(atPath: dir)[.posixPermissions] as? Int == 0o700)
        #expect(try FileManager.default.attributesOfItem(atPath: dir + "/key")[.posixPermissions] as? Int == 0o600)
        #expect(try store.load(issuer: c.issuer, clientID: "other", subject: "alice") == nil)
    }

    @Test func everyFlippedBitIsAClearErrorAndTheFileStaysUntouched() throws {
        let c = creds()
        try store.save(c)
        let path = try store.entryPath(issuer: c.issuer, clientID: c.clientID, subject: "alice")
        let original = try Data(contentsOf: URL(fileURLWithPath: path))
        for i in stride(from: 0, to: original.count * 8, by: 37) {
            var damaged = original
            damaged[i / 8] ^= UInt8(1 << (i % 8))
            try damaged.write(to: URL(fileURLWithPath: path))
            let reason = unreadable { _ = try store.load(issuer: c.issuer, clientID: c.clientID, subject: "alice") }
            #expect(reason != nil && reason?.contains("left as is") == true, "bit \(i): \(reason ?? "accepted")")
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == damaged)
        }
    }

    @Test func truncatedEmptyBinaryWrongVersionAndSwappedFilesAreRefused() throws {
        let a = creds(client: "a"), b = creds(client: "b", refresh: "rt-b")
        try store.save(a)
        try store.save(b)
        let pa = try store.entryPath(issuer: a.issuer, clientID: a.clientID, subject: "alice"), pb = try store.entryPath(issuer: b.issuer, clientID: b.clientID, subject: "alice")
        let good = try Data(contentsOf: URL(fileURLWithPath: pa))
        var versioned = good
        versioned[4] = 9
        for bad in [Data(), good.prefix(20), good.prefix(good.count - 1), Data((0..<300).map { UInt8($0 % 256) }), versioned] {
            try bad.write(to: URL(fileURLWithPath: pa))
            #expect(unreadable { _ = try store.load(issuer: a.issuer, clientID: a.clientID, subject: "alice") } != nil)
        }
        // b's file copied over a's: authenticated data binds the entry to its account.
        try FileManager.default.removeItem(atPath: pa)
        try FileManager.default.copyItem(atPath: pb, toPath: pa)
        #expect(unreadable { _ = try store.load(issuer: a.issuer, clientID: a.clientID, subject: "alice") }?.contains("another account") == true)
    }

    @Test func keyProblemsAreRefusedWithAFix() throws {
        let c = creds()
        try store.save(c)
        chmod(dir + "/key", 0o644)
        #expect(unreadable { _ = try store.load(issuer: c.issuer, clientID: c.clientID, subject: "alice") }?.contains("chmod 600") == true)
        chmod(dir + "/key", 0o600)
        let key = try Data(contentsOf: URL(fileURLWithPath: dir + "/key"))
        let entries = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(".cred") }
        try Data(repeating: 7, count: 32).write(to: URL(fileURLWithPath: dir + "/key"))  // a wrong key: it opens nothing
        #expect((try? store.load(issuer: c.issuer, clientID: c.clientID, subject: "alice")) ?? nil == nil)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(".cred") } == entries)
        try FileManager.default.removeItem(atPath: dir + "/key")
        #expect(unreadable { _ = try store.load(issuer: c.issuer, clientID: c.clientID, subject: "alice") }?.contains("missing") == true)
        #expect(unreadable { _ = try store.current(issuer: c.issuer, clientID: c.clientID) }?.contains("missing") == true)
        try key.write(to: URL(fileURLWithPath: dir + "/key"))
        chmod(dir + "/key", 0o600)
        #expect(try store.load(issuer: c.issuer, clientID: c.clientID, subject: "alice") == c)
    }

    @Test func folderOwnedBySomeoneElseIsRefused() throws {
        let c = creds()
        try store.save(c)
        guard geteuid() == 0 else {
            // Not root: a folder owned by root (and open to all) stands in for one owned by someone else.
            #expect(unreadable { _ = try CredentialStore(directory: "/tmp").load(issuer: c.issuer, clientID: c.clientID, subject: "alice") }?.contains("chown") == true)
            return
        }
        chown(dir, 65534, 65534)
        #expect(unreadable { _ = try store.load(issuer: c.issuer, clientID: c.clientID, subject: "alice") }?.contains("chown") == true)
        chown(dir, 0, 0)
        #expect(try store.load(issuer: c.issuer, clientID: c.clientID, subject: "alice") == c)
    }

    @Test func openFolderAndSymlinksAreRefused() throws {
        let c = creds()
        try store.save(c)
        chmod(dir, 0o777)
        #expect(unreadable { _ = try store.load(issuer: c.issuer, clientID: c.clientID, subject: "alice") }?.contains("chmod 700") == true)
        chmod(dir, 0o700)
        // A symlinked folder (someone pointing the store elsewhere) is refused.
        let link = dir + "-link"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: dir)
        #expect(unreadable { _ = try CredentialStore(directory: link).load(issuer: c.issuer, clientID: c.clientID, subject: "alice") }?.contains("symbolic link") == true)
        // A symlinked entry file is refused, not followed.
        let path = try store.entryPath(issuer: c.issuer, clientID: c.clientID, subject: "alice")
        try FileManager.default.moveItem(atPath: path, toPath: path + ".real")
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: path + ".real")
        #expect(unreadable { _ = try store.load(issuer: c.issuer, clientID: c.clientID, subject: "alice") }?.contains("symbolic link") == true)
    }
}

extension Data {
    func contains(_ s: String) -> Bool { range(of: Data(s.utf8)) != nil }
}
