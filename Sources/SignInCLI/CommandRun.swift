import SignInKit

/// One run of a command, as its `run` sees it: what the command line said, where its text goes, and the library's
/// `SignInSession`, which decides what the run uses (its doc comment has the tree). A command asks for the parts it
/// needs, and nothing is built before it asks:
/// - `agent`: the forwarded agent's tokens, when this run goes through one (`signin ssh`);
/// - `context(...)`: a client over the configuration this run uses, with the sign-in's progress shown on standard
///   error, saying what the command needs of it (an API, a sign-in, a pasted address, more scopes);
/// - `session` itself, for an API's authorizer (`signin mcp`) or what the files say.
/// What the run used (its configuration file, its API) is kept in `invocation`, so advice after an error repeats it.
final class CommandRun {
    let arguments: Arguments
    let environment: [String: String]
    let io: IOStreams
    /// `--json`.
    let json: Bool
    let session: SignInSession
    /// The command's name, for advice.
    private let command: String
    /// The configuration file and API a context was built for (nil before one was).
    private var usedConfiguration: String?
    private var usedResource: String?

    init(command: String, _ a: Arguments, _ env: [String: String], _ io: IOStreams) {
        arguments = a
        environment = env
        self.io = io
        json = a.has(.json)
        session = SignInSession(environment: env, configurationOption: a.value(.config), profileOption: a.value(.profile), accountOption: a.value(.account))
        self.command = command
    }

    /// How this run was asked for, and (once a context is built) the configuration and API it used: rendered only
    /// when advice is given (an error, a sign-in's progress), never on a run that needs none.
    var invocation: Invocation {
        var i = Invocation(arguments, environment, command: command)
        i.configurationPath = usedConfiguration
        i.resource = usedResource
        return i
    }

    /// `--account`, else `$SIGNIN_ACCOUNT`; nil for the current account.
    var account: String? { session.account }

    /// The forwarded agent's tokens, when the session says this run goes through one.
    var agent: AgentTokens? {
        session.forwardedAgentSocket.map { AgentTokens(agent: AgentClient(socketPath: $0), account: account, io: io) }
    }

    /// The client this command needs, over the configuration the session decides for it.
    /// - `signsIn`: the run may sign in (only then is it asked whether a browser can open here);
    /// - `paste`: a person may paste the address the browser ended at; `noBrowser`: `--no-browser`;
    /// - `resource`: the API it is for, when it may sign in for it with no configuration at all (the API's metadata
    ///   then says where); `addedScopes`: the scopes it asks for besides those held (for an API, a step-up).
    func context(signsIn: Bool = false, paste: Bool = false, noBrowser: Bool = false, resource: String? = nil,
                 addedScopes: [String] = []) throws(SignInError) -> Context {
        if let notice = session.ignoredProfile { io.err("signin: \(notice)") }
        let env = environment
        // Only commands that may sign in ask whether a browser can open here (which may read /proc).
        let browsing = signsIn ? Browsing(noBrowser: noBrowser, paste: paste, env) : .none
        usedConfiguration = session.configurationPath
        usedResource = resource
        let known = KnownClient()
        var events = Events(pasteEnabled: browsing.paste, headless: browsing.headless, environment: env)
        // (Advice in a sign-in's progress repeats this run's options; a run that does not sign in shows none.)
        if signsIn { events.invocation = invocation }
        events.io = io
        events.deviceFlowAvailable = { known.client?.offersDeviceFlow ?? true }
        let shown = events
        let io = self.io
        // A move of the API to another authorization server is followed only when a person at a terminal says so.
        let confirm = { (detail: String) -> Bool in
            Posix.isatty(0) && Posix.isatty(2) && io.confirm("signin: \(detail)\nSign in at the new server?")
        }
        let client = try session.client(for: .init(resource: resource, signsIn: signsIn, addedScopes: addedScopes), onEvent: { shown.show($0) },
                                        passphrase: Passphrase.provider(fd: arguments.value(.passphraseFD).flatMap { Int32($0) }), confirmServerChange: confirm)
        known.client = client
        return Context(client: client, account: account, json: json, environment: env, browsing: browsing, io: io, run: self)
    }

    /// Hands a run of the static half of the release build to the dynamic half (`DynamicSibling`): for a cached
    /// command that needs the network after all (`--force-refresh`, an interactive sign-in). No-op elsewhere.
    func handOver(_ reason: String) { HandOverPoint.require(.command(reason)) }
}

/// The client, once built: what the sign-in's advice asks about the provider. Weak: the client's own event
/// handler holds this, and a strong reference back would be a cycle that outlives the run.
final class KnownClient: @unchecked Sendable {
    weak var client: SignInClient?
}

/// What a command that reads a configuration runs with (`CommandRun.context`): the client, the account and the output form.
struct Context {
    let client: SignInClient
    /// `--account`, else `$SIGNIN_ACCOUNT`; nil for the current account.
    let account: String?
    let json: Bool
    let environment: [String: String]
    let browsing: Browsing
    /// Where the command's text goes.
    let io: IOStreams
    /// The run, whose invocation (its configuration and account options) a suggestion repeats, as `signin login -c
    /// FILE`, so it acts on the same configuration.
    var run: CommandRun? = nil
    var invocation: Invocation? { run?.invocation }

    /// `signin NAME` with this run's configuration option (and account), as a person would type it next.
    func command(_ name: String) -> String { invocation?.command(name) ?? "signin " + name }

    /// The account restored as the command line asks: `--account`, `--min-ttl`, `--force-refresh`.
    func restore(_ freshness: Freshness, _ token: TokenKind = .access) throws(SignInError) -> SignInUser {
        try client.restore(account: account, minimumValidity: .seconds(freshness.minTTL), forceRefresh: freshness.forceRefresh, token: token)
    }
}
