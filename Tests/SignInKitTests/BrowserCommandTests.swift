import Foundation
import Testing
@testable import SignInKit
@testable import SignInBase
@testable import SignInTransport
@testable import SignInProtocol
@testable import SignInStorage

@Suite struct BrowserCommandTests {
    let url = "https://accounts.google.com/o/oauth2/v2/auth?client_id=a&redirect_uri=http%3A%2F%2F127.0.0.1%3A5%2Fcb&scope=openid%20email&state=x=y"

    @Test func browserVariableIsUsedWithoutAShellAndTheURLStaysWhole() {
        #expect(Browser.command(for: url, environment: ["BROWSER": "firefox"]) == ["firefox", url])
        #expect(Browser.command(for: url, environment: ["BROWSER": "open-it --new-tab %s:lynx"]) == ["open-it", "--new-tab", url])
        #expect(Browser.localBrowserLikely(environment: ["BROWSER": "x"]))
        #expect(!Browser.localBrowserLikely(environment: ["SSH_CONNECTION": "1 2 3 4"]))
        #expect(!Browser.localBrowserLikely(environment: [:]) || Browser.isWSL)
        #expect(Browser.localBrowserLikely(environment: ["DISPLAY": ":0"]))
    }
}
