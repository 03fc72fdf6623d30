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
    /// The defaults: browser, 5 minutes, configured port.
    public init() {}
}

extension SignInOptions {
    /// `timeout` in whole seconds, at least one.
    var timeoutSeconds: Int { max(1, timeout.wholeSecondsRoundedUp) }
}

extension Duration {
    /// As seconds, for `Date` arithmetic and the C interfaces.
    var timeInterval: Double {
        let (s, atto) = components
        return Double(s) + Double(atto) / 1e18
    }

    /// Whole seconds, a part second counting as one: what the C interfaces and the configuration file take.
    var wholeSecondsRoundedUp: Int { Int(timeInterval.rounded(.up)) }
}
