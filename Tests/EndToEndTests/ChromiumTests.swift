import Foundation
import Testing

/// One sign-in through a real browser: headless Chromium on oidc-provider-mock's consent page, through the
/// loopback redirect, to signin's result page.
@Suite struct ChromiumTests {
    @Test func headlessChromiumSignsInAndSeesTheSuccessPage() throws {
        for path in ["/usr/bin/chromium", "/usr/bin/chromedriver"] {
            try #require(FileManager.default.isExecutableFile(atPath: path), "\(path) missing: run scripts/setup (installs chromium, chromium-driver, python3-selenium)")
        }
        let mock = try Shared.mock.get()
        let box = try Sandbox(issuer: mock.issuer, secret: "s")
        let browser = "/usr/bin/python3 \(Paths.providers.appendingPathComponent("chromium_browser.py").path)"
        let r = try box.signin(["login", "--timeout", "90"], env: ["BROWSER": browser])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == "Signed in as Alice Example <alice@example.org>\n")
        let page = try #require(box.standinSteps().last)
        #expect(page["error"] == nil, "\(page)")
        let url = page["url"] as? String ?? ""
        #expect(url.hasPrefix("http://127.0.0.1:") && url.hasSuffix("/callback-result"))
        #expect(!url.contains("code="))  // the redirect took the code out of the address bar
        #expect(page["title"] as? String == "signin: Signed in")
        #expect((page["text"] as? String)?.contains("Signed in as Alice Example <alice@example.org>. You may close this tab") == true)
    }
}
