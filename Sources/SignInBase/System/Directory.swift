#if canImport(Glibc)
import Glibc
#endif

/// A folder's listing, durability and creation: the one place each of these system calls is written.
package enum Directory {
    /// The names in `directory` (empty when it cannot be read).
    public static func fileNames(_ directory: String) -> [String] { names(directory) ?? [] }

    /// The names in `directory`, or nil when it cannot be opened (errno says why).
    public static func names(_ directory: String) -> [String]? { try? listing(directory).get() }

    /// The names in `directory`, or the error opening it failed with (read at once).
    package static func listing(_ directory: String) -> Result<[String], SystemError> {
        guard let dir = opendir(directory) else { return .failure(.current) }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { names.append(name) }
        }
        return .success(names)
    }

    /// fsync of the folder: renames and removals in it are on disk.
    public static func sync(_ directory: String) {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if fd >= 0 {
            fsync(fd)
            close(fd)
        }
    }

    /// Creates `path` and the folders above it that are missing: `mode` for the last, 0755 for the others (a path
    /// made absolute against the working directory first). Returns the folder that could not be made and why.
    @discardableResult
    public static func create(_ path: String, mode: mode_t = 0o700) -> (path: String, reason: String)? {
        let absolute = ProcessEnvironment.absolute(path)
        var made = ""
        let parts = absolute.split(separator: "/")
        for (i, part) in parts.enumerated() {
            made += "/" + part
            let last = i == parts.count - 1
            if mkdir(made, last ? mode : 0o755) != 0 && errno != EEXIST { return (made, FileIO.errnoText()) }
        }
        return nil
    }
}
