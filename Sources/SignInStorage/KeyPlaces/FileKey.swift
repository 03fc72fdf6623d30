import SignInBase
import SignInProtocol
#if canImport(Glibc)
import Glibc
#endif

/// The key in a file beside the entries (mode 0600): what a copy of the folder carries along.
struct FileKey: KeyPlace {
    func words(_ key: StoreKey) -> String { "in a file (\(key.filePath))" }

    func describe(_ d: StoreKey.Descriptor, _ key: StoreKey) -> String { "file \(key.filePath)" }

    func write(_ bytes: [UInt8], file: String, descriptor: String, id: String, passphrase: String?, _ key: StoreKey) throws(SignInError) -> StoreKey.Descriptor? {
        // O_EXCL through a temporary name and link: two processes creating the key at once end up sharing one.
        let tmp = file + ".tmp-\(Posix.getpid())"
        do { try FileIO.writeAtomically(bytes, to: tmp) } catch { throw .storeUnwritable(path: file, reason: error.reason) }
        defer { Posix.unlink(tmp) }
        do throws(SystemError) { _ = try Posix.linkFile(tmp, file) } catch { throw .storeUnwritable(path: file, reason: error.description) }
        return nil
    }
}
