import SignInBase
import SignInProtocol
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// What the store leaves behind, cleared.
extension CredentialStore {
    /// Temporary files left by a process that died mid-write (they hold only ciphertext or an account name):
    /// removed once their writer is gone.
    func removeAbandonedTemporaryFiles() {
        guard let names = try? fileNames() else { return }
        for name in names {
            guard let range = name.firstRange(of: ".tmp-") else { continue }
            let pidText = name[range.upperBound...].prefix { $0 != "-" }
            guard let pid = pid_t(pidText), pid != Posix.getpid(), Posix.processHasEnded(pid) else { continue }
            Posix.unlink(directory + "/" + name)
        }
    }

    /// After the last account anywhere in this folder is signed out, nothing of signin's stays behind: the key
    /// (wherever it was ever put), the records sealed with it (which nothing could open again), the pointers and the
    /// lock files go, and so does the folder when it is empty.
    package func removeLeftoversIfEmpty() {
        guard let names = try? fileNames(), !names.contains(where: { $0.hasSuffix(".cred") }) else { return }
        key.destroy()
        for name in Directory.fileNames(directory)
        where name.hasSuffix(".current") || name.hasSuffix(".lock") || name == "kernel-keyring-unavailable" || Self.isRecordFile(name) {
            Posix.unlink(directory + "/" + name)
        }
        Posix.rmdir(directory)
    }
}
