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
        var st = stat()
        if Posix.lstat(directory, &st) != 0 {
            guard errno == ENOENT else { throw .storeUnreadable(path: directory, reason: FileIO.errnoText()) }
            guard create else { return false }
            try makeDirectories()
            guard Posix.lstat(directory, &st) == 0 else { throw .storeUnwritable(path: directory, reason: FileIO.errnoText()) }
        }
        if (st.st_mode & S_IFMT) == S_IFLNK {
            throw .storeUnreadable(path: directory, reason: "is a symbolic link; refusing to follow it (replace it with a real folder: rm \(directory) && mkdir -m 700 \(directory))")
        }
        guard (st.st_mode & S_IFMT) == S_IFDIR else { throw .storeUnreadable(path: directory, reason: "is not a folder") }
        guard st.st_uid == Posix.geteuid() else {
            throw .storeUnreadable(path: directory, reason: "is owned by uid \(st.st_uid), not by you (uid \(Posix.geteuid())); fix: chown \(Posix.geteuid()) \(directory) && chmod 700 \(directory)")
        }
        guard st.st_mode & 0o077 == 0 else {
            throw .storeUnreadable(path: directory, reason: "is open to other users (mode \(String(st.st_mode & 0o777, radix: 8))); fix: chmod 700 \(directory)")
        }
        return true
    }

    func makeDirectories() throws(SignInError) {
        guard directory.hasPrefix("/") else { throw .storeUnwritable(path: directory, reason: "is not an absolute path") }
        if let failed = Directory.create(directory) { throw .storeUnwritable(path: failed.path, reason: failed.reason) }
    }

    func fileNames() throws(SignInError) -> [String] {
        guard let names = Directory.names(directory) else { throw .storeUnreadable(path: directory, reason: FileIO.errnoText()) }
        return names
    }
}
