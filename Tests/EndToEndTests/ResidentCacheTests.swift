import Foundation
import SignInKit
import Testing

/// The resident cache of a long-running program: one watch of the store's folder per process, however many clients,
/// and a store folder replaced from above (its parent moved away and another put in its place) is seen.
@Suite(.serialized) struct ResidentCacheTests {
    /// The inotify instances of this process that watch `folder` (read from /proc/self/fdinfo: each watch names its
    /// inode in hex), so other tests running meanwhile do not count.
    static func instancesWatching(_ folder: String) -> Int {
        var st = stat()
        guard stat(folder, &st) == 0 else { return 0 }
        let inode = "ino:" + String(st.st_ino, radix: 16) + " "
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return fds.filter { fd in
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + fd)) == "anon_inode:inotify"
                && ((try? String(contentsOfFile: "/proc/self/fdinfo/" + fd, encoding: .utf8))?.contains(inode) ?? false)
        }.count
    }

    @Test func aThousandClientsOfOneStoreShareOneWatch() async throws {
        let strict = try Shared.strict.get()
        let box = try strict.signedInSandbox()
        var clients: [SignInClient] = []
        for _ in 0..<1000 {
            let c = SignInClient(configuration: SignInConfiguration(clientID: box.clientID, issuer: strict.issuer), storeDirectory: box.storeDir,
                                 environment: box.environment)
            _ = try await c.restorePreviousSignIn()
            clients.append(c)
        }
        let during = Self.instancesWatching(box.storeDir)
        #expect(during == 1, "\(during) inotify instances watch the store for 1000 clients")
        clients.removeAll()
        #expect(await eventually { Self.instancesWatching(box.storeDir) == 0 }, "the watch ends with its last client")
    }

    @Test func aStoreFolderReplacedFromAboveIsSeen() async throws {
        let strict = try Shared.strict.get()
        let box = try strict.signedInSandbox()
        let client = SignInClient(configuration: SignInConfiguration(clientID: box.clientID, issuer: strict.issuer), storeDirectory: box.storeDir,
                                  environment: box.environment)
        let first = try await client.restorePreviousSignIn()
        #expect(first.accessToken != nil)
        // The data folder (the store's parent) moved away, an empty one in its place: a new process is not signed in.
        let data = box.root.appendingPathComponent("data").path
        try FileManager.default.moveItem(atPath: data, toPath: data + ".old")
        try FileManager.default.createDirectory(atPath: box.storeDir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        #expect(try box.signin("token").status == 3)
        // The watcher's thread wakes within microseconds; asked until then (at most 20 s).
        var seen = false
        let deadline = Date().addingTimeInterval(20)
        while !seen && Date() < deadline {
            do { _ = try await client.restorePreviousSignIn() } catch { seen = true }
            if !seen { try await Task.sleep(for: .milliseconds(10)) }
        }
        // Once more after the deadline: a sleep may end long after it on a loaded run (the cooperative pool's turn).
        if !seen { do { _ = try await client.restorePreviousSignIn() } catch { seen = true } }
        #expect(seen, "the running program still answers the old folder's token")
    }
}
