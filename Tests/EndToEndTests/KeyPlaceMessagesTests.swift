import Foundation
import Testing
@testable import SignInKit
@testable import SignInBase
@testable import SignInTransport
@testable import SignInProtocol
@testable import SignInStorage

/// What a newcomer sees when the key cannot go where the configuration says, and when there is no configuration.
@Suite struct KeyPlaceMessagesTests {
    @Test func noSecretServiceIsSaidOnceWithTheFix() throws {
        let strict = try Shared.strict.get()
        let box = try strict.sandbox(extra: ["key_storage": "secret-service"])
        let r = try box.signin(["login"], env: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/bus", "DISPLAY": ""])
        #expect(r.status == 1, "\(r.stderr)")
        let line = r.stderr.split(separator: "\n").first { $0.contains("Cannot write") } ?? ""
        #expect(line.contains("no Secret Service runs in this session") && line.contains("passphrase"), "\(r.stderr)")
        #expect(line.components(separatedBy: "Secret Service").count - 1 <= 2 && !line.contains("org.freedesktop"), "\(line)")
        #expect(!r.stderr.contains("Opening the browser"), "found out before anyone signed in: \(r.stderr)")
    }

    @Test func accountsWithoutAnyConfigurationAnswersAsAccountsAll() throws {
        let dir = NSTemporaryDirectory() + "signin-none-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let env = ["HOME": dir, "PATH": "/usr/bin:/bin"]
        let plain = try Subprocess.run(Paths.signin, ["accounts"], env: env)
        let all = try Subprocess.run(Paths.signin, ["accounts", "--all"], env: env)
        #expect(plain.status == 0 && plain.stdout == all.stdout && plain.stdout.contains("`signin init` writes one"), "\(plain.status) \(plain.stdout) \(plain.stderr)")
    }
}
