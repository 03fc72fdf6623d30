import SignInKit

/// `signin metadata-server [--port N]`: the metadata server of `exec --gce-metadata`, for as long as it runs.
///
/// 1. Listens on 127.0.0.1 (`--port`, else a free port) first: a fixed port is held from the start, so nobody else
///    can take it while nobody is signed in (a tool would then trust whoever answers).
/// 2. Signed in (and a first service-account token minted, with impersonation)? Not signed in: a note, and the
///    server answers tools "not signed in" until `signin login`; any other failure: the error and its exit code.
/// 3. Prints the variables a tool needs, as shell lines on standard output (`--json`: one object), then serves.
/// 3. SIGINT, SIGTERM or SIGHUP: the request in hand is answered, the server closes, exit 0.
struct MetadataServerCommand: SignInCommand {
    static let verboseOption = OptionSpec("--verbose", "Log each request on standard error (path and status, never a token)")
    static let portOption = OptionSpec("--port", value: "N", "Listen on this port of 127.0.0.1 (default: a free one; a fixed one for a systemd unit)")
    static let spec = CommandSpec(
        of: Self.self, options: Impersonation.options + [MetadataServerCommand.portOption, MetadataServerCommand.verboseOption], summary: "Serve your sign-in to Google's tools as a local metadata server, until stopped",
        details: """
            Serves a Google Compute Engine metadata server on 127.0.0.1, as `exec --gce-metadata` does, until
            SIGINT or SIGTERM: for IDEs, notebooks, or a systemd user unit. Prints the variables to set
            (GCE_METADATA_HOST, GCE_METADATA_IP, GCE_METADATA_ROOT) as shell lines on standard output. Only your own
            processes, with the header Metadata-Flavor: Google and Host 127.0.0.1:PORT, get an answer. It stays in
            the foreground: in a shell, run it with `&` on a fixed --port and set the three variables to
            127.0.0.1:PORT yourself. Not signed in yet, it holds the port and answers "not signed in".
            """,
        takesAccount: true)

    let port: Int
    let chain: [String]?
    let verbose: Bool

    init(_ a: Arguments, _ env: [String: String]) throws(UsageError) {
        chain = Impersonation(a).chain
        if let p = a.value(Self.portOption) {
            guard let n = Int(p), (1...65535).contains(n) else { throw UsageError("--port needs a port number from 1 to 65535") }
            port = n
        } else {
            port = 0
        }
        verbose = a.has(Self.verboseOption)
    }

    func run(_ r: CommandRun) throws -> ExitCode {
        return try run(in: r.context())
    }

    func run(in c: Context) throws(SignInError) -> ExitCode {
        let io = c.io
        let log = MetadataLog(verbose: verbose, configurationPath: c.client.configuration.sourcePath, loginCommand: c.command("login"))
        var server: MetadataServer?
        return try ServerLife.untilStopSignal(start: { () throws(SignInError) in
            let started = try MetadataServer(client: c.client, account: c.account, impersonate: chain, port: port, onEvent: { log.show($0, io) })
            server = started
            do throws(SignInError) {
                _ = try LocalTokens(c: c, chain: chain, interactive: false).token(.access, Freshness(minTTL: 300))
            } catch .noPreviousSignIn(let reason) {
                io.err("signin: note: not signed in (\(reason.description.withoutControlCharacters)); the metadata server holds \(started.address) and answers \"not signed in\" until `\(c.command("login"))`.")
            }
            started.start()
        }, announce: {
            guard let server else { return }
            if c.json {
                io.out(JSONText.object(["port": .int(server.port), "environment": .object(server.environment.mapValues { .string($0) })]))
            } else {
                for (name, value) in server.environment.sorted(by: { $0.key < $1.key }) { io.out("export \(name)=\(value)") }
            }
            let who = server.impersonating.last ?? (try? c.client.restore(account: c.account).profile.email) ?? nil
            io.err("signin: metadata server for \(who?.withoutControlCharacters ?? "the signed-in account") on \(server.address); stop it with Ctrl-C.")
        }, stop: { server?.stop() })
    }
}
