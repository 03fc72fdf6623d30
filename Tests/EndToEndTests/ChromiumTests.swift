import Foundation
import Testing

/// One sign-in through a real browser: headless Chromium on oidc-provider-mock's consent page, through the
/// loopback redirect, to signin's result page.
@Suite struct ChromiumTests {
    @Test func headlessChromiumSignsInAndSeesTheSuccessPage() throws {
        for path in ["/usr/bin/chromium", "/usr/bin/chromedriver"] {
            try #require(FileManager.default.isExecutableFile(atPath: path), "\(path) missing: run scripts/setup --tests (installs chromium, chromium-driver, python3-selenium)")
        }
        let mock = try Shared.mock.get()
        let box = try Sandbox(issuer: mock.issuer, secret: "s")
        let browser = "/usr/bin/python3 \(Paths.providers.appendingPathComponent("chromium_browser.py").path)"
        // Screenshots of the result page in light and dark mode stay in .build/test-artifacts for a person to look at.
        let shots = Paths.repo.appendingPathComponent(".build/test-artifacts").path
        let r = try box.signin(["login", "--timeout", "90"], env: ["BROWSER": browser, "STANDIN_SCREENSHOTS": shots])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == "Signed in as Alice Example <alice@example.org>\n")
        // The browser writes its report after signin has exited (it still takes the screenshots): wait for it.
        let page = try #require(box.waitForStandinSteps(1).last)
        #expect(page["error"] == nil, "\(page)")
        let url = page["url"] as? String ?? ""
        #expect(url.hasPrefix("http://127.0.0.1:") && url.hasSuffix("/callback-result"))
        #expect(!url.contains("code="))  // the redirect took the code out of the address bar
        #expect(page["title"] as? String == "signin: You are signed in")
        let text = page["text"] as? String ?? ""
        #expect(text.contains("You are signed in"))
        #expect(text.contains("Account\nAlice Example <alice@example.org>"), "\(text)")
        #expect(text.contains("Provider\n\(mock.issuer)"), "\(text)")
        #expect(text.contains("You can close this tab and return to the terminal."))
        // Light and dark mode are both designed: the page follows the browser's colour scheme.
        #expect(page["background_light"] as? String != page["background_dark"] as? String, "\(page)")
        #expect(page["headline_light"] as? String == "rgb(26, 127, 55)", "\(page)")
    }
}
