import Foundation
import Synchronization
import SignInKit
import Testing

@Suite struct DamagedStoreTests {
    @Test func aTamperedStoreIsReportedLeftAloneAndRemovedOnlyByLogout() throws {
        let strict = try Shared.strict.get()
        let box = try Sandbox(issuer: strict.issuer)
        #expect(try box.signin("login").status == 0)
        let entry = try #require(box.entryFile())
        var bytes = try Data(contentsOf: URL(fileURLWithPath: entry))
        bytes[bytes.count - 5] ^= 0x40
        try bytes.write(to: URL(fileURLWithPath: entry))
        for cmd in ["whoami", "token", "restore", "status"] {
            let r = try box.signin(cmd)
            #expect(r.status == 1, "\(cmd)")
            #expect(r.stderr.contains(entry) && r.stderr.contains("left as is"), "\(cmd): \(r.stderr)")
        }
        let login = try box.signin("login")  // refuses before the browser opens, and overwrites nothing
        #expect(login.status == 1)
        #expect(!login.stderr.contains("Opening the browser"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: entry)) == bytes)
        #expect(try box.signin("logout").status == 0)
        #expect(try box.signin("login").status == 0)
        #expect(try box.signin("whoami").status == 0)
    }
}
