import SignInBase
import SignInProtocol
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// The store's folder: ours, private, created on first write.
extension CredentialStore {
    /// Checks the folder is ours and private; creates it (0700) when `create` is set.
    /// Returns false when it does not exist and was not created.
    @discardableResult
    func checkDirectory(create: Bool) throws(SignInError) -> Bool {
        var st: FileStatus
        switch Posix.status(ofLink: directory) {
        case .success(let s): st = s
        case .failure(let e):
            guard e.isMissing else { throw .storeUnreadable(path: directory, reason: e.description) }
            guard create else { return false }
            try makeDirectories()
            switch Posix.status(ofLink: directory) {
            case .success(let s): st = s
            case .failure(let e): throw .storeUnwritable(path: directory, reason: e.description)
            }
        }
        if st.kind == .symbolicLink {
            throw .storeUnreadable(path: directory, reason: "is a symbolic link; refusing to follow it (replace it with a real folder: rm \(directory) && mkdir -m 700 \(directory))")
        }
        guard st.kind == .directory else { throw .storeUnreadable(path: directory, reason: "is not a folder") }
        guard st.owner == Posix.geteuid() else {
            throw .storeUnreadable(path: directory, reason: "is owned by uid \(st.owner), not by you (uid \(Posix.geteuid())); fix: chown \(Posix.geteuid()) \(directory) && chmod 700 \(directory)")
        }
        guard st.permissions & 0o077 == 0 else {
            throw .storeUnreadable(path: directory, reason: "is open to other users (mode \(String(st.permissions & 0o777, radix: 8))); fix: chmod 700 \(directory)")
        }
        return true
    }

    func makeDirectories() throws(SignInError) {
        guard directory.hasPrefix("/") else { throw .storeUnwritable(path: directory, reason: "is not an absolute path") }
        if let failed = Directory.create(directory) { throw .storeUnwritable(path: failed.path, reason: failed.reason) }
    }

    func fileNames() throws(SignInError) -> [String] {
        switch Directory.listing(directory) {
        case .success(let names): return names
        case .failure(let e): throw .storeUnreadable(path: directory, reason: e.description)
        }
    }
}

/// Removes a file of the store; one that is not there is no error, any other failure is the store's (unwritable).
/// True when it removed one.
@discardableResult
func removeStoreFile(_ path: String) throws(SignInError) -> Bool {
    do throws(SystemError) { return try Posix.removeFile(path) } catch { throw .storeUnwritable(path: path, reason: error.description) }
}
