import SignInBase
import SignInProtocol
import SignInStorage
import SignInGrant
import SignInTransport
import FoundationEssentials

/// Progress of a sign-in, for a caller to show. Never carries a token.
public enum SignInEvent: Sendable {
    /// The URL to visit and where the answer is awaited; `browser` says whether a browser was started (nil when
    /// `SignInOptions.openBrowser` is off).
    case authorizationURL(url: URL, redirectURI: URL, port: Int, browser: BrowserLaunch?)
    /// A request reached the callback but was not for this sign-in; still waiting.
    case refusedCallback(reason: String)
    /// A pasted address was refused; still waiting.
    case refusedPaste(reason: String)
    /// The device flow's code to show.
    case deviceCode(DeviceCode)
    /// The authorization code arrived and is being exchanged.
    case exchangingCode
    /// The browser command failed (for example `xdg-open` with no browser installed); still waiting.
    case browserFailed(reason: String, port: Int)
    /// A connection to the listener from another local user (or one whose user cannot be told) was closed
    /// unanswered; reported once per cause.
    case refusedConnection(reason: String)
    /// Something a person should know about the store, said once where it happens: where a new key was put and why
    /// (a file, for want of a keyring), a kernel keyring that cannot be used. Not only during a sign-in. The library
    /// never writes it anywhere itself; the `signin` command prints it.
    case notice(String)
}


extension SignInEvent: CustomStringConvertible {
    /// A line a person can read (a log's), with no module or type names and no token.
    public var description: String {
        switch self {
        case .authorizationURL(let url, _, let port, let browser):
            let how: String
            switch browser {
            case .launched(let command)?: how = "opened with \(command.withoutControlCharacters)"
            case .unavailable(let reason)?: how = "no browser: \(reason.withoutControlCharacters)"
            case nil: how = "no browser opened"
            }
            return "sign in at \(url.absoluteString.withoutControlCharacters) (\(how); answer awaited on port \(port))"
        case .refusedCallback(let reason): return "a callback was refused: \(reason); still waiting"
        case .refusedPaste(let reason): return "a pasted address was refused: \(reason); still waiting"
        case .deviceCode(let code): return "enter the code \(code.userCode.withoutControlCharacters) at \(code.verificationURI.absoluteString.withoutControlCharacters)"
        case .exchangingCode: return "the answer came; completing the sign-in"
        case .browserFailed(let reason, _): return "the browser could not be started: \(reason); still waiting"
        case .refusedConnection(let reason): return "a connection to the sign-in listener was refused: \(reason)"
        case .notice(let text): return text
        }
    }
}
