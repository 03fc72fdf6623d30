import SignInBase
import SignInProtocol
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// What `signin key move` did.
public struct KeyMoveResult: Sendable, Equatable {
    /// Where the key was, in words.
    public let from: String
    /// Where it is now, in words.
    public let to: String
    /// How many entries were encrypted again under the new key (zero when nothing moved).
    public let reencrypted: Int
    /// False when the key was there already and nothing changed.
    public let moved: Bool
}

extension CredentialStore {
    /// Moves the store to a new key kept where `storage` says (`signin key move`).
    ///
    /// 1. Older stores of the named configurations are carried over first (only format 3 entries name themselves).
    /// 2. Under the key lock (no save can run meanwhile), an interrupted move is finished or rolled back, and the
    ///    old key is read. Already there: nothing changes.
    /// 3. A new passphrase is asked for (twice) before anything is written: Ctrl-C there changes nothing.
    /// 4. Journal `prepared`; a new random key is staged where it goes (`key.pending`, or the Secret Service and
    ///    `key.json.pending`) and read back from there; every entry and pointer is decrypted with the old key and
    ///    written under the new key and its new names as `.pending` files.
    /// 5. Journal `committed` (the commit point); then the pending files take their final names, and the old
    ///    entries, pointers, key file or descriptor and the old key's Secret Service item and kernel cache go.
    ///
    /// A crash or signal before 5 leaves the old arrangement (the next command rolls back), after it the new one
    /// (the next command rolls forward); never both. A copy of the old key opens nothing written after the move.
    public func moveKey(to storage: KeyStorage, configurations: [(issuer: String, clientID: String)] = []) throws(SignInError) -> KeyMoveResult {
        guard try checkDirectory(create: false) else { throw .noPreviousSignIn(reason: .noStore(path: directory)) }
        let k = key
        if let o = try k.read().map(Opened.init) {
            for c in configurations {
                try withConfigurationLock { () throws(SignInError) in try carryOver(o, issuer: c.issuer, clientID: c.clientID) }
            }
        }
        // What the kernel holds decrypted was read under the old key's names: none of it outlives the move.
        defer { k.kernelEntries.removeAll() }
        return try FileLock.with(k.lockPath) { () throws(SignInError) -> KeyMoveResult in
            try k.finishInterruptedMove()
            let before = try k.location()
            guard let oldKey = try k.read(recover: false) else { throw .noPreviousSignIn(reason: .noStore(path: directory)) }
            let target = storage == .auto ? k.resolvedStorage().0 : storage
            let from = k.description
            guard before.storage != target else { return KeyMoveResult(from: from, to: from, reencrypted: 0, moved: false) }

            let old = Opened(oldKey)
            let new = Opened(try Crypto.randomBytes(32))
            let passphrase = target.asksPassphrase ? try k.newPassphrase() : nil
            let plan = try reencryptionPlan(old: old, new: new)
            let id = try k.newID()
            let staged: StoreKey.Descriptor? = target == .secretService ? StoreKey.Descriptor(storage: .secretService, id: id, kdf: nil, wrapped: nil) : nil
            try KeyMoveJournal(state: .prepared, staged: staged).write(to: k.journalPath)
            do throws(SignInError) {
                let pendingFile = k.filePath + StoreKey.pendingSuffix, pendingDescriptor = k.descriptorPath + StoreKey.pendingSuffix
                let written = try k.write(new.key, to: target, file: pendingFile, descriptor: pendingDescriptor, id: id, passphrase: passphrase)
                Failpoint.hit("key-move-after-write")
                let check: [UInt8]
                if let written { check = try k.unwrapUncached(written, descriptorPath: pendingDescriptor, passphrase: passphrase) } else { check = try k.readFile(pendingFile) }
                guard check == new.key else { throw SignInError.storeUnwritable(path: directory, reason: "the new key could not be read back from its new place") }
                for file in plan.files {
                    do throws(FileIO.Failure) { try FileIO.writeAtomically(file.bytes, to: directory + "/" + file.name + StoreKey.pendingSuffix) } catch {
                        throw SignInError.storeUnwritable(path: directory + "/" + file.name, reason: error.reason)
                    }
                }
                Failpoint.hit("key-move-before-commit")
                var renames = plan.files.map { [$0.name + StoreKey.pendingSuffix, $0.name] }
                renames.append(written == nil ? ["key" + StoreKey.pendingSuffix, "key"] : ["key.json" + StoreKey.pendingSuffix, "key.json"])
                var removals = plan.oldNames
                if written == nil { removals.append("key.json") } else if before == .file { removals.append("key") }
                var retired: StoreKey.Descriptor?
                if case .described(let d) = before { retired = d }
                try KeyMoveJournal(state: .committed, staged: nil, renames: renames, removals: removals, retired: retired).write(to: k.journalPath)
            } catch {
                // Anything short of the commit: back to the old arrangement now, not only at the next command.
                try? k.finishInterruptedMove()
                throw error
            }
            Failpoint.hit("key-move-after-commit")
            try k.finishInterruptedMove()
            if case .described(let d)? = try? k.location() { k.cache(new.key, d) }
            return KeyMoveResult(from: from, to: k.description, reencrypted: plan.entries, moved: true)
        }
    }

    /// Every entry and pointer of the folder, encrypted again under `new` with their new names; the old names.
    private func reencryptionPlan(old: Opened, new: Opened) throws(SignInError) -> (files: [(name: String, bytes: [UInt8])], oldNames: [String], entries: Int) {
        var files: [(name: String, bytes: [UInt8])] = []
        var oldNames: [String] = []
        var renamedAccount: [String: (configuration: String, account: String)] = [:]
        let names = Directory.fileNames(directory)
        for name in names {
            guard let parsed = StoreNames.parseEntry(name) else { continue }
            let path = directory + "/" + name
            guard let creds = try readForMove(path: path, old, parsed.configuration, parsed.account) else { continue }
            let c = new.names.configuration(issuer: creds.issuer, clientID: creds.clientID)
            let a = new.names.account(issuer: creds.issuer, clientID: creds.clientID, subject: creds.profile.userID)
            files.append((name: "\(c).\(a).cred", bytes: try Self.sealed(creds, new, configuration: c, account: a)))
            oldNames += [name, name + ".lock"]
            renamedAccount[parsed.configuration + "." + parsed.account] = (c, a)
        }
        let entries = files.count
        for name in names where name.hasSuffix(".current") && name.utf8.count == 32 + 8 {
            let c = String(name.prefix(32))
            oldNames.append(name)
            guard let a = try readPointerFile(directory + "/" + name), let moved = renamedAccount[c + "." + a] else { continue }
            files.append((name: "\(moved.configuration).current", bytes: Array((moved.account + "\n").utf8)))
        }
        // The API records (`.api`: the server an API named, which keeps it pinned; `.registration`: the client
        // registered there) move with the entries, renamed and sealed under the new key in the same journaled commit;
        // left behind they would not decrypt, and the next token for the API would register a new client.
        for name in names {
            guard let dot = name.lastIndex(of: "."), name.utf8.count == 32 + name[dot...].utf8.count else { continue }
            let kind = String(name[name.index(after: dot)...])
            guard kind == "api" || kind == "registration" else { continue }
            guard var plain = Self.openedRecord(path: directory + "/" + name, kind: kind, key: old.key) else { continue }
            defer { plain.withUnsafeMutableBytes { Posix.zero($0) } }
            guard let json = JSONValue.object(from: Data(plain)), let recordName = CredentialStore.recordName(kind: kind, json: json) else { continue }
            let moved = new.names.configuration(issuer: recordName, clientID: kind)
            files.append((name: "\(moved).\(kind)", bytes: try Self.sealed(plain, new, configuration: moved, account: kind)))
            oldNames.append(name)
        }
        return (files, oldNames, entries)
    }

    /// One entry for the move: format 3 is read with the old key; an older file left of a configuration that was
    /// not named (and so not carried over) stops the move, which would otherwise lose it.
    private func readForMove(path: String, _ old: Opened, _ c: String, _ a: String) throws(SignInError) -> StoredCredentials? {
        let data: Data
        do { data = try FileIO.read(path: path, limit: 1 << 20, noFollow: true) } catch {
            if error.notFound { return nil }
            throw .storeUnreadable(path: path, reason: error.reason)
        }
        if data.count > EntryFile.versionOffset, data[data.startIndex + EntryFile.versionOffset] != Self.formatVersion {
            throw .storeUnreadable(path: path, reason: "belongs to a configuration this signin cannot find (written by an older signin, not carried over yet): run any command with that configuration (--config FILE) first, or sign it out; nothing was moved")
        }
        do {
            return try entryForMove(path: path, old, c, a)
        } catch .storeUnreadable(let p, let reason) {
            throw .storeUnreadable(path: p, reason: reason.replacing("; left as is", with: "") + "; nothing was moved (sign that account out first)")
        }
    }
}
