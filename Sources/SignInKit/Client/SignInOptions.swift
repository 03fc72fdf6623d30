import SignInBase
import SignInProtocol
import SignInStorage
import SignInGrant
import SignInTransport
import FoundationEssentials

/// How an interactive sign-in runs.
public struct SignInOptions: Sendable {
    /// Open the system browser (else only report the URL through `.authorizationURL`).
    public var openBrowser = true
    /// How long to wait for the person to finish in the browser (or to approve a device code).
    public var timeout: Duration = .seconds(300)
    /// Overrides the configuration's `redirect_port`.
    public var port: Int?
    /// Also accept the address the browser ended at, pasted on this file descriptor (standard input: 0).
    public var pasteFileDescriptor: Int32?
    /// Suggests an account to the provider.
    public var loginHint: String?
    /// Use the device authorization grant (RFC 8628) instead of a browser on this machine.
    public var useDeviceFlow = false
    /// When set, the sign-in must end with this account (incremental consent).
    public var requireUserID: String?
    /// When no browser can be opened here (none likely, or its launcher failing within a few seconds), fail at once
    /// (`.unsupported`, saying why) instead of showing the address and waiting: for a program whose person never sees
    /// its output (an MCP client's bridge). Default false.
    public var failsWithoutBrowser = false
    /// Where no browser can open, called with the address to visit: true when the program put it before the person
    /// some other way (an MCP client's URL-mode elicitation), and the sign-in waits for the answer as if a browser had
    /// opened; false (or nil): no browser, as `failsWithoutBrowser` says.
    public var showAddressElsewhere: (@Sendable (URL) -> Bool)?
    /// Where the page after the sign-in sends the person back to: "the terminal" (default), "your MCP client"...
    public var returnTo = "the terminal"
    /// APIs (RFC 8707 resource indicators) this sign-in asks for besides the configuration's `resources`.
    public var resources: [String] = []
    /// How the required account is named in an error (its display name, rather than its `sub`).
    var requiredAccountName: String?
    /// The defaults: browser, 5 minutes, configured port.
    public init() {}

    /// Options as given, the others at their defaults.
    public init(openBrowser: Bool = true, timeout: Duration = .seconds(300), port: Int? = nil, pasteFileDescriptor: Int32? = nil,
                loginHint: String? = nil, useDeviceFlow: Bool = false, requireUserID: String? = nil) {
        self.openBrowser = openBrowser
        self.timeout = timeout
        self.port = port
        self.pasteFileDescriptor = pasteFileDescriptor
        self.loginHint = loginHint
        self.useDeviceFlow = useDeviceFlow
        self.requireUserID = requireUserID
    }

    /// Whether a browser is likely to open on this machine: an explicit `$BROWSER`, else a display (X11, Wayland,
    /// or WSL's `wslview`) and no SSH session. Without one, offer the device flow (`useDeviceFlow`) or show the
    /// address for another device; a sign-in with `openBrowser` does not try to start one there.
    public static func browserLikely(environment: [String: String]? = nil) -> Bool {
        Browser.localBrowserLikely(environment: environment ?? ProcessEnvironment.current)
    }
}

extension SignInOptions {
    /// `timeout` in whole seconds, at least one.
    var timeoutSeconds: Int { max(1, timeout.wholeSecondsRoundedUp) }
}
