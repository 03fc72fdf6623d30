import SignInBase
import SignInProtocol
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// The journal of a key move, `key-move.json` in the store folder, so that a move ends in the old arrangement or
/// the new one whatever interrupts it (a crash, Ctrl-C, a full disk, a lost terminal):
///
/// - `prepared`: the new key and the re-encrypted entries are being written under names ending in `.pending`.
///   Whoever finds this rolls back: every `.pending` file goes, and so does the staged key kept elsewhere
///   (`staged`); the old key and entries were never touched.
/// - `committed`: everything new is written and read back. Whoever finds this rolls forward, which needs no key:
///   `renames` (pending to final), then `removals` (the old entries, pointers, locks and key file or descriptor),
///   then the old key kept elsewhere (`retired`: its Secret Service item and kernel cache) is forgotten.
///
/// Writing the journal (atomically) is each step's commit point; every step of either direction can be run again.
package struct KeyMoveJournal: Codable, Equatable {
    package enum State: String, Codable { case prepared, committed }
    package var state: State
    var staged: StoreKey.Descriptor?
    var renames: [[String]] = []
    var removals: [String] = []
    var retired: StoreKey.Descriptor?

    package init(state: State, staged: StoreKey.Descriptor?, renames: [[String]] = [], removals: [String] = [], retired: StoreKey.Descriptor? = nil) {
        self.state = state
        self.staged = staged
        self.renames = renames
        self.removals = removals
        self.retired = retired
    }

    /// Reads what `write` wrote, with signin's own parser; nil for anything else.
    package init?(json o: [String: JSONValue]) {
        guard case .string(let s)? = o["state"], let state = State(rawValue: s) else { return nil }
        self.state = state
        func descriptor(_ v: JSONValue?) -> StoreKey.Descriptor?? {
            switch v {
            case nil, .null?: return .some(nil)
            case .object(let d)?: return StoreKey.Descriptor(json: d).map { .some($0) }
            default: return nil
            }
        }
        func names(_ v: JSONValue?) -> [String]? {
            guard case .array(let a)? = v else { return v == nil ? [] : nil }
            let out = a.compactMap(\.string)
            return out.count == a.count && out.allSatisfy(Self.isPlainName) ? out : nil
        }
        guard let staged = descriptor(o["staged"]), let retired = descriptor(o["retired"]), let removals = names(o["removals"]) else { return nil }
        self.staged = staged
        self.retired = retired
        self.removals = removals
        guard case .array(let pairs)? = o["renames"] ?? .array([]) else { return nil }
        var renames: [[String]] = []
        for p in pairs {
            guard let pair = names(p), pair.count == 2 else { return nil }
            renames.append(pair)
        }
        self.renames = renames
    }

    /// A file name in the store folder: never a path, so a tampered journal cannot reach outside it.
    static func isPlainName(_ s: String) -> Bool { !s.isEmpty && !s.contains("/") && s != "." && s != ".." }

    /// What `write` writes and `init?(json:)` reads (`Codable`'s members and names, keys sorted, no member for nil).
    package var json: JSONValueOut {
        var o: [String: JSONValueOut] = ["state": .string(state.rawValue), "removals": .array(removals.map { .string($0) }),
                                         "renames": .array(renames.map { .array($0.map { .string($0) }) })]
        o["staged"] = staged.map(\.json)
        o["retired"] = retired.map(\.json)
        return .object(o)
    }

    package func write(to path: String) throws(SignInError) {
        do { try FileIO.writeAtomically(Array(json.text.utf8), to: path) } catch { throw .storeUnwritable(path: path, reason: error.reason) }
    }
}

extension StoreKey {
    /// Finishes or rolls back a move that was interrupted (see `KeyMoveJournal`). The caller holds the key lock.
    func finishInterruptedMove() throws(SignInError) {
        let data: Data
        do { data = try FileIO.read(path: journalPath, limit: 4 << 20, noFollow: true) } catch {
            if error.notFound { return }
            throw .storeUnreadable(path: journalPath, reason: error.reason)
        }
        guard let json = JSONValue.object(from: data), let journal = KeyMoveJournal(json: json) else {
            throw .storeUnreadable(path: journalPath, reason: "is not a key move journal this signin knows; left as is (the credentials are untouched)")
        }
        switch journal.state {
        case .prepared:
            for name in Directory.fileNames(directory) where name.hasSuffix(Self.pendingSuffix) { Posix.unlink(directory + "/" + name) }
            if let staged = journal.staged { forget(staged) }
        case .committed:
            for pair in journal.renames {
                do throws(SystemError) { try Posix.renameFile(directory + "/" + pair[0], directory + "/" + pair[1], missingIsFine: true) } catch {
                    throw .storeUnwritable(path: directory + "/" + pair[1], reason: error.description)
                }
            }
            Directory.sync(directory)
            for name in journal.removals { Posix.unlink(directory + "/" + name) }
            if let retired = journal.retired { forget(retired) }
        }
        Directory.sync(directory)
        try removeStoreFile(journalPath)
        Directory.sync(directory)
    }
}
