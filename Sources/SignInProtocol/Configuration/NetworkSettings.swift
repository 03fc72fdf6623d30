import SignInBase

/// How requests reach the network beyond this machine, as a configuration says it (`ca_file`, `proxy`): what a company
/// network asks of every request, the configured provider's and those of every API signed in to from its address.
/// Requests to this machine (loopback) never go through a proxy.
public struct NetworkSettings: Sendable, Equatable {
    /// A PEM file of certificate authorities to trust instead of the system's (a company CA, a TLS-inspecting proxy).
    public var caFile: String?
    /// The proxy every request goes through (`http://HOST:PORT`, `https://`, `socks5://`, `socks5h://`), whatever the
    /// environment says: for programs started without the person's environment (an MCP client passes no
    /// `https_proxy`). Nil: as the environment says (`https_proxy`, `no_proxy`, as libcurl reads them).
    public var proxy: String?

    public init(caFile: String? = nil, proxy: String? = nil) {
        self.caFile = caFile
        self.proxy = proxy
    }

    /// Why `value` cannot be a proxy's address; nil when it can.
    public static func proxyProblem(_ value: String) -> String? {
        let schemes = ["http://", "https://", "socks5://", "socks5h://"]
        guard let scheme = schemes.first(where: { value.lowercased().hasPrefix($0) }) else {
            return "must start with http://, https://, socks5:// or socks5h:// (the proxy's address)"
        }
        let rest = value.dropFirst(scheme.count)
        guard !rest.isEmpty, !rest.hasPrefix("/"), !value.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F }) else {
            return "must name the proxy's host (and port), with no space or control character"
        }
        return nil
    }
}
