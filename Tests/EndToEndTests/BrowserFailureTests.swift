import Foundation
import Testing

@Suite struct BrowserFailureTests {
    @Test func aFailingBrowserCommandIsReportedWithTheWaysThrough() throws {
        let strict = try Shared.strict.get()
        let box = try Sandbox(issuer: strict.issuer)
        let r = try box.signin(["login", "--timeout", "3"], env: ["BROWSER": "/bin/false"])
        #expect(r.status == 6, "\(r.stderr)")
        #expect(r.stderr.contains("The browser could not be opened (/bin/false exited with status 1)"))
        #expect(r.stderr.contains("signin login --device"))
        #expect(r.stderr.contains("/authorize?"))
    }
}
