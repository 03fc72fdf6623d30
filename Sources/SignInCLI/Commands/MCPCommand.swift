import Dispatch
import SignInKit
import SignInMCP
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// `signin mcp URL`: the stdio MCP server an MCP client launches (Claude Desktop, an IDE), carrying every message to
/// the remote MCP server at URL and back, signed in (`MCPStdioBridge` over `MCPClientTransport`, SignInMCP).
struct MCPCommand: SignInCommand {
    static let scopeOption = OptionSpec("--scope", value: "SCOPE", "At the first sign-in, ask for this scope too (again for more)")
    static let headerOption = OptionSpec("--header", value: "'NAME: VALUE'", "Send this header on every request (${VAR} is read from the environment; again for more)")
    static let transportOption = OptionSpec("--transport", value: "auto|http|sse", "Streamable HTTP, HTTP+SSE (2024-11-05), or streamable HTTP falling back to HTTP+SSE (default auto)")
    static let deviceOption = OptionSpec("--device", "Sign in with a code on another device (RFC 8628), where the server allows it: for a machine with no browser")
    static let timeoutOption = OptionSpec("--timeout", value: "SECONDS", "Give up waiting for a sign-in in the browser after this long (default 300)")

    static let spec = CommandSpec(
        of: Self.self, options: [MCPCommand.scopeOption, MCPCommand.headerOption, MCPCommand.transportOption, MCPCommand.deviceOption, MCPCommand.timeoutOption],
        summary: "Be a stdio MCP server for an MCP client, carrying its messages to the MCP server at URL, signed in",
        details: """
            For MCP clients that launch a command (Claude Desktop, VS Code, Cursor: command "signin", args ["mcp",
            URL]). Reads one JSON-RPC message per line on standard input and writes the server's messages, one per
            line, on standard output, and nothing else there (progress of a sign-in and notices go to standard error).
            Speaks MCP's streamable HTTP (2025-03-26 to 2025-11-25: answers as JSON or event streams, handed on as they
            come; the session id and protocol version; the server's own stream; a resumed stream; a new session after a
            404), MCP 2026-07-28 per message (no session; its headers from the message), and HTTP+SSE (2024-11-05)
            when the server refuses the first (--transport). Signs in only when the server answers 401 (a public
            server, or one keyed with --header, is bridged as it is), as `signin login --resource URL` does: the first
            time the browser opens once (found through the desktop session when the client passed none of it; where
            no page can open, the request is answered at once naming `signin login --resource URL`; or --device),
            later runs restore the sign-in from the encrypted store with no browser, a 401 is refreshed, a 403
            insufficient_scope is stepped up to the scopes held and those named, a server that forgot its clients is
            registered at again, each at most once by itself; several bridges for one server share one sign-in. A
            server the configuration lists in `resources` is served by the configured grant. `signin token`,
            `whoami`, `status` and `logout --resource URL` see the same sign-in. With SIGNIN_AGENT_SOCK (over `signin
            ssh --resource URL`), the tokens come from the forwarded agent and no grant is held here. Ends when
            standard input closes (or on SIGTERM, SIGINT): pending answers are given for up to 1 s, the session is
            ended, exit 0, within 2 s whatever is pending. A server that cannot be reached at the start: an error
            answer to the client's initialize, a line on standard error, exit 5.
            """,
        usageTail: " URL", readsConfiguration: false, takesJSON: false, takesArguments: true)

    let url: String
    let scopes: [String]
    let headers: [String]
    let transport: MCPClientTransport.Kind
    let device: Bool
    let timeout: Int

    init(_ a: Arguments, _ env: [String: String]) throws(UsageError) {
        scopes = try SignInCLI.scopes(a, Self.scopeOption)
        headers = a.all(Self.headerOption)
        let kind = a.value(Self.transportOption) ?? "auto"
        device = a.has(Self.deviceOption)
        timeout = try a.int(Self.timeoutOption, default: 300, in: 1...86400)
        guard let k = MCPClientTransport.Kind(rawValue: kind) else {
            throw UsageError("--transport \"\(kind.withoutControlCharacters)\" is not one of auto, http, sse")
        }
        transport = k
        guard a.positional.count == 1 else { throw UsageError("`signin mcp` takes the MCP server's URL: signin mcp https://example.org/mcp") }
        url = a.positional[0]
        guard SignInConfiguration.isValidResource(url), url.hasPrefix("https://") || url.hasPrefix("http://") else {
            throw UsageError("\"\(url.withoutControlCharacters)\" is not an MCP server's URL (https, or http on loopback; no fragment)")
        }
        for h in headers {
            guard let colon = h.firstIndex(of: ":"), colon > h.startIndex, !h.unicodeScalars.contains(where: { $0 == "\n" || $0 == "\r" || $0 == "\0" }),
                  h[..<colon].allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) else {
                throw UsageError("--header \"\(h.withoutControlCharacters)\" is not \"Name: value\"")
            }
        }
    }

    func run(_ r: CommandRun) throws -> ExitCode {
        if let agent = r.agent, let answered = try run(through: agent) { return answered }
        return bridge(r.environment, r.io)
    }

    /// Through a forwarded agent (one not of this machine): the agent's tokens for the server, and no grant here.
    func run(through agent: AgentTokens) throws(SignInError) -> ExitCode? {
        if agent.isOwnAgent { return nil }
        let authorization = ForwardedMCPAuthorization(agent: agent.agent, account: agent.account, resource: url)
        return try bridge(authorization, agent.io, ProcessEnvironment.current, stdio: MCPStdioBridge(output: IOStreams.Stream.output.rawValue))
    }

    /// On this machine: the desktop session found, the sign-in's way decided, the authorizer the session chooses.
    private func bridge(_ given: [String: String], _ io: IOStreams) -> ExitCode {
        // An MCP client passes only HOME LOGNAME PATH SHELL TERM USER: the desktop session's runtime folder, bus and
        // display are found from the session itself (the user's own only), for the keyring and the browser; put in
        // this process's environment too (before any thread runs) for libsecret.
        let (env, found) = DesktopSession.completing(given)
        DesktopSession.export(found, from: env)
        let browsing = Browsing(noBrowser: false, paste: false, env)
        var events = Events(pasteEnabled: false, headless: browsing.headless, environment: env)
        events.io = io
        var invocation = Invocation(Arguments(), env, command: "login")
        invocation.resource = url
        events.invocation = invocation
        let shown = events
        var options = SignInOptions()
        options.timeout = .seconds(timeout)
        options.useDeviceFlow = device
        // Nobody reads standard error at a sign-in's moment: where no browser opens, the request says so at once
        // (naming `signin login --resource URL`) instead of waiting for a visit that will not come.
        options.openBrowser = true
        options.failsWithoutBrowser = !device
        options.returnTo = "your MCP client (Claude Desktop, your editor, your agent)"
        // Where no browser opens, a client that takes URL-mode elicitation (MCP 2025-11-25) is offered the page itself.
        let stdio = MCPStdioBridge(output: IOStreams.Stream.output.rawValue)
        let server = url
        options.showAddressElsewhere = { page in stdio.offerPage(page.absoluteString, message: "Sign in to \(server) to continue (signin opens no browser here)") }
        // The session decides the authorizer: the configured client and grant for a server the configuration lists in
        // `resources` or its enterprise sign-in serves; else the server's own sign-in, made only when it answers 401.
        let session = SignInSession(environment: env)
        let (authorization, configuration) = session.authorizer(for: url, scopes: scopes, options: options, onEvent: { shown.show($0) },
                                                                notice: { io.err("signin: \($0)") })
        do throws(SignInError) {
            return try bridge(authorization, io, env, stdio: stdio, network: configuration?.network ?? NetworkSettings())
        } catch {
            io.err("signin: \(error.description)")
            return ExitCode(error)
        }
    }

    /// The bridge until standard input closes or a stop signal comes.
    private func bridge(_ authorization: any MCPAuthorization, _ io: IOStreams, _ env: [String: String], stdio bridge: MCPStdioBridge,
                        network: NetworkSettings = NetworkSettings()) throws(SignInError) -> ExitCode {
        let expanded: [String]
        do throws(SignInError) {
            expanded = try headers.map { (h) throws(SignInError) -> String in try Self.expand(h, env) }
        } catch {
            // The client hears why at its first request (not a closed pipe), and so does its log.
            io.err("signin: \(error.description)")
            _ = try? blockingAwait { await bridge.refuseAll(reason: error.description) }
            return ExitCode(error)
        }
        let url = self.url
        let transport = MCPClientTransport(url: url, kind: transport, authorization: authorization, headers: expanded, caFile: network.caFile, proxy: network.proxy, receive: bridge.write,
                                           notice: { io.err("signin: \($0)") }, failedToStart: { bridge.end(.failedToStart($0)) })
        // Whatever is pending, the process is gone within the MCP SDKs' grace (SIGTERM 2 s after the input closed):
        // the bridge's own end takes at most 1.3 s, and this is the floor under it, with room for a loaded machine.
        bridge.onEnd {
            DedicatedThread.start(canceller: nil, {
                Posix.usleep(1_500_000)
                // A token request already sent finishes and its answer is saved (a rotated refresh token is the grant).
                ShieldedWork.awaitNone(upTo: 1_800)
            }, then: { _ in Posix.exitNow(0) })
        }
        let reason = try ServerLife.whileRunning(onStop: { bridge.end(.finished) }) { () -> MCPStdioBridge.Reason? in
            try? blockingAwait { await bridge.run(transport, notice: { io.err("signin: \($0)") }) }
        }
        switch reason {
        case .failedToStart(let e)?:
            io.err("signin: could not start the MCP session with \(url.withoutControlCharacters): \(e.description)")
            return ExitCode(e)
        default: return .success
        }
    }

    /// `${NAME}` in a header's value replaced by the environment's `NAME` (so a secret need not be in the client's
    /// configuration file); an unset one is an error naming it.
    static func expand(_ header: String, _ env: [String: String]) throws(SignInError) -> String {
        var out = "", rest = Substring(header)
        // By hand (FoundationEssentials has no `range(of:)`; the executable links no full Foundation).
        func opening(_ s: Substring) -> (lower: Substring.Index, upper: Substring.Index)? {
            var i = s.startIndex
            while i < s.endIndex {
                let next = s.index(after: i)
                if s[i] == "$", next < s.endIndex, s[next] == "{" { return (i, s.index(after: next)) }
                i = next
            }
            return nil
        }
        while let start = opening(rest) {
            out += rest[..<start.lower]
            guard let end = rest[start.upper...].firstIndex(of: "}") else { out += rest[start.lower...]; return out }
            let name = String(rest[start.upper..<end])
            guard let value = env[name] else {
                throw .configInvalid(file: "the command line", field: "--header", reason: "${\(name.withoutControlCharacters)} is not set in the environment")
            }
            // Checked after expansion: a line break in the variable would be a header of the variable's making.
            guard !value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
                throw .configInvalid(file: "the command line", field: "--header", reason: "${\(name.withoutControlCharacters)} holds a line break or another control character, which a header may not")
            }
            out += value
            rest = rest[rest.index(after: end)...]
        }
        return out + rest
    }
}

/// The tokens of a forwarded agent for one MCP server (`signin ssh --resource URL` on the laptop): asked for each
/// request (the agent answers from memory while fresh; a DPoP-bound token with the agent's proof for that request),
/// marked rejected and asked again on a 401.
struct ForwardedMCPAuthorization: MCPAuthorization {
    let agent: AgentClient
    let account: String?
    let resource: String

    func headers(method: String, url: URL) async throws(SignInError) -> [String: String] {
        // The laptop's token for the server goes only to the server's own origin, whatever the server names.
        try APIAuthorizer.requireOwnOrigin(url, of: resource)
        let (agent, account, resource) = (self.agent, self.account, self.resource)
        let issued = try await offPool("asking the forwarded agent") { (_) throws(SignInError) -> IssuedToken in
            var r = TokenRequest()
            r.account = account
            r.resource = resource
            // A token bound to the laptop's DPoP key travels with the agent's proof for this one request.
            r.proofFor = TokenRequest.DPoPTarget(method: method, url: url.absoluteString)
            return try agent.token(r)
        }
        let (type, value) = try issued.presented(to: .typed)
        guard let proof = issued.dpopProof else { return ["Authorization": type + " " + value] }
        return ["Authorization": type + " " + value, "DPoP": proof]
    }

    func decide(status: Int, wwwAuthenticate: String?, afterRetry: Bool) async throws(SignInError) -> AuthorizationDecision {
        guard status == 401, !afterRetry else { return .done }
        let (agent, account, resource) = (self.agent, self.account, self.resource)
        try await offPool("asking the forwarded agent") { (_) throws(SignInError) -> Void in
            var r = TokenRequest()
            r.account = account
            r.resource = resource
            try agent.rejected(try agent.token(r).token.value)
        }
        return .retry
    }
}
