import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Reading and replacing other programs' small configuration files (gcloud's, docker's) for the command line,
/// with the same care as signin's own: bounded reads, atomic replacement.
package enum TextFiles {
    /// The file's text (at most 1 MiB); nil when it is not there.
    public static func read(_ path: String) throws(SignInError) -> String? {
        let data: Data
        do throws(FileIO.Failure) {
            data = try FileIO.read(path: path, limit: 1 << 20)
        } catch {
            if error.notFound { return nil }
            throw .storeUnreadable(path: path, reason: error.reason)
        }
        guard let text = String(validating: data, as: UTF8.self) else { throw .storeUnreadable(path: path, reason: "not UTF-8 text") }
        return text
    }

    /// Replaces the file atomically (temporary file, fsync, rename) with `mode`, making its folder (0700) if needed.
    public static func write(_ text: String, to path: String, mode: mode_t = 0o600) throws(SignInError) {
        let folder = PathName(path: path).deletingLastPathComponent
        if !folder.isEmpty, let failed = Directory.create(folder) { throw .storeUnwritable(path: failed.path, reason: failed.reason) }
        do throws(FileIO.Failure) {
            try FileIO.writeAtomically(Array(text.utf8), to: path, mode: mode)
        } catch {
            throw .storeUnwritable(path: path, reason: error.reason)
        }
    }
}
