import Dispatch
import SignInKit

#if canImport(Glibc)
import Glibc
#endif

/// `signin login`: sign in through the browser (or `--no-browser`, `--device`), add the account and make it current.
struct Login: SignInCommand {
    static let noBrowserOption = OptionSpec("--no-browser", "Do not open a browser; print the address (paste the address it ends at back here)")
    static let deviceOption = OptionSpec("--device", "Sign in with a code on another device (RFC 8628), where the provider allows it")
    static let portOption = OptionSpec("--port", value: "N", "Listen on this loopback port (default: redirect_port, else any free port)")
    static let timeoutOption = OptionSpec("--timeout", value: "SECONDS", "Give up waiting for the browser after this long (default 300)")
    static let loginHintOption = OptionSpec("--login-hint", value: "EMAIL", "Suggest this account to the provider (--account does the same for login)")
    static let scopeOption = OptionSpec("--scope", value: "SCOPE", "Ask for this scope too, besides those held or configured (again for more): a step-up")

    static let spec = CommandSpec(
        of: Self.self, options: [Login.noBrowserOption, Login.deviceOption, Login.portOption, Login.timeoutOption, Login.loginHintOption, TokenTarget.loginResourceOption, Login.scopeOption],
        summary: "Sign in through the browser (or --no-browser, --device); add the account and make it current",
        details: """
            Opens the browser at the provider's sign-in page, receives the answer on http://127.0.0.1:<port>, verifies
            the ID token and stores the credentials encrypted. The account is added beside any others (or updated)
            and becomes the current one. Prints "Signed in as NAME <EMAIL>". Over SSH or without a display no
            browser is opened: the address is printed, with the ways through. With --resource URL, the sign-in is for
            that API (RFC 8707). When it is one of the configuration's resources, the sign-in also asks for it at the
            configured provider. Otherwise (an MCP server, say: any API, even one whose metadata names your own
            provider) the API itself is asked (its 401 names its metadata, RFC 9728), and signin signs in at the server
            it names, said before the browser opens, with a client of its own (a client ID metadata document, or
            registered there for that API, RFC 7591), never your configured client; OpenID provider or plain OAuth 2.0
            server, naming the API on every token request: a sign-in of its own, beside the others (`whoami`, `status`,
            `logout` take --resource URL too). Run again when the API answers 403 insufficient_scope: it asks the API
            and steps up to the scopes it names. A server that gives no identity is said so ("Signed in to API at
            SERVER"). `--audience` is for `signin token` (RFC 8693), not for a sign-in.
            """,
        takesAccount: true)

    let noBrowser: Bool
    let device: Bool
    let port: Int?
    let timeout: Int
    let loginHint: String?
    /// `--resource URL`: an API the sign-in asks for besides the configuration's `resources`.
    let resource: String?
    /// `--scope S`, each: asked for besides the configured scopes, or for an API the scopes held (a step-up).
    let addedScopes: [String]

    func run(_ r: CommandRun) throws -> ExitCode {
        if let agent = r.agent, let answered = try run(through: agent) { return answered }
        return try run(in: r.context(signsIn: true, paste: !device, noBrowser: noBrowser, resource: resource, addedScopes: addedScopes))
    }

    /// Through a forwarded agent there is no grant here to act on: where to do it instead.
    func run(through agent: AgentTokens) throws(SignInError) -> ExitCode? { try ForwardedAgent.refuse(Self.name, agent) }

    init(_ a: Arguments, _ env: [String: String]) throws(UsageError) {
        noBrowser = a.has(Self.noBrowserOption)
        device = a.has(Self.deviceOption)
        if device && noBrowser { throw UsageError("--device and --no-browser are two different ways to sign in without a local browser; choose one") }
        port = a.value(Self.portOption) == nil ? nil : try a.int(Self.portOption, default: 0, in: 1...65535)
        timeout = try a.int(Self.timeoutOption, default: 300, in: 1...86400)
        loginHint = a.value(Self.loginHintOption)
        resource = TokenTarget.resource(a)
        addedScopes = try scopes(a, Self.scopeOption)
    }

    func run(in c: Context) throws(SignInError) -> ExitCode {
        let io = c.io
        let configuration = c.client.configuration
        if let api = resource, !configuration.foundFromAPI, !configuration.resources.contains(api), configuration.enterpriseAuthorization.isEnabled {
            return try enterpriseSignIn(api, c)
        }
        // An API's sign-in names the server it goes to before any browser opens: what the API's metadata named.
        if !c.json, configuration.foundFromAPI, let api = resource {
            io.err("Signing in to \(api.withoutControlCharacters) at \(configuration.issuer.withoutControlCharacters) (the authorization server the API names).")
        }
        // Who is signed in already, said before any browser opens.
        if !c.json, configuration.foundFromAPI, let current = try Self.heldSignIn(c) {
            let added = configuration.scopes.filter { !current.grantedScopes.contains($0) }
            io.err(added.isEmpty ? "Signing in to this API again: the new sign-in replaces the one held."
                                 : "Stepping up: asking also for \(added.joined(separator: " ").withoutControlCharacters) (held: \(current.grantedScopes.joined(separator: " ").withoutControlCharacters)).")
        } else if !c.json, let current = try c.client.storedUser() {
            if let ended = current.grantEndedAt {
                io.err("The provider ended the sign-in of \(current.profile.displayName) on \(iso8601(ended)); signing in again replaces it.")
            } else {
                io.err("Already signed in as \(current.profile.displayName). Signing in adds another account, or updates this one if you choose it again; the new sign-in becomes the current account.")
            }
        }
        var opts = options(c)
        opts.resources = resource.map { [$0] } ?? []
        let user = try Login.signIn(c.client, opts, adding: configuration.foundFromAPI ? [] : addedScopes)
        if c.json {
            io.out(JSONText.object(JSONText.user(user)))
        } else {
            io.out(user.identity == .none ? "Signed in to \(user.accountLine)" : "Signed in as \(user.accountLine)")
            let missing = Set(c.client.configuration.scopes).subtracting(user.grantedScopes)
            if !missing.isEmpty { io.err("Note: these scopes were not granted: \(missing.sorted().joined(separator: " "))") }
            if user.refreshToken == nil {
                io.err("Note: the provider issued no refresh token, so `signin token` will need a new `signin login` once the access token expires (\(c.client.configuration.providerRules.refreshTokenHint)).")
            }
        }
        return .success
    }

    /// How this run's sign-in goes, as the command line says: its timeout, port, hint, the device flow, the browser
    /// and a pasted address.
    func options(_ c: Context) -> SignInOptions {
        var opts = SignInOptions()
        opts.timeout = .seconds(timeout)
        opts.port = port
        opts.loginHint = loginHint ?? c.account
        opts.useDeviceFlow = device
        opts.openBrowser = !c.browsing.headless
        if c.browsing.paste { opts.pasteFileDescriptor = 0 }
        return opts
    }

    /// `login --resource URL` for an MCP server the enterprise sign-in serves (the session chose the configuration: the
    /// server's authorization server takes ID-JAGs): one sign-in at the company's IdP serves every server.
    /// 1. Signed in at the IdP already (a sign-in whose grant has not ended): no browser. Otherwise the IdP's sign-in,
    ///    in the browser, as `signin login` makes it.
    /// 2. The server's token bought with it now (a new exchange: the person asked to sign in), kept as `token` keeps it.
    /// 3. The IdP refusing the sign-in's ID token (its session ended): one sign-in at the IdP, and the token again.
    ///    The IdP's policy refusing the server: said, exit 7, nothing kept, never the server's own sign-in.
    func enterpriseSignIn(_ api: String, _ c: Context) throws(SignInError) -> ExitCode {
        let io = c.io
        let idp = c.client.configuration.issuer
        let opts = options(c)
        if !c.json { io.err("Signing in to \(api.withoutControlCharacters) through your sign-in at \(idp.withoutControlCharacters) (enterprise-managed authorization: no browser for the server).") }
        let held = try c.client.storedUser(account: c.account)
        let signedIn = held == nil || held?.grantEndedAt != nil
        if signedIn { _ = try Login.signIn(c.client, opts) }
        var asked = TokenRequest(kind: .access, minimumValidity: .seconds(60), forceRefresh: true, account: c.account)
        asked.resource = api
        let issued: IssuedToken
        do throws(SignInError) {
            issued = try c.client.token(asked)
        } catch .noPreviousSignIn where !signedIn {
            // The IdP's session ended (or nobody is signed in there any more): one sign-in there, and on.
            io.err("signin: the sign-in at \(idp.withoutControlCharacters) must be made again; opening it.")
            _ = try Login.signIn(c.client, opts)
            issued = try c.client.token(asked)
        }
        if c.json {
            var fields: [String: JSONValueOut] = ["resource": .string(api), "sub": .string(issued.subject), "through": .string(idp)]
            fields["expires_at"] = issued.token.expirationDate.map { .string(iso8601($0)) } ?? .null
            io.out(JSONText.object(fields))
        } else {
            io.out("Signed in to \(api) as \(issued.name) through \(idp)")
        }
        return .success
    }

    /// The sign-in held for this run's API: through the client it is signing in with, else through the client its
    /// records still name (a step-up that registered a new client).
    static func heldSignIn(_ c: Context) throws(SignInError) -> SignInUser? {
        if let current = try c.client.storedUser() { return current }
        guard let api = c.client.configuration.grantAPI, let store = c.client.credentialStore,
              let held = APIAccess.knownConfiguration(for: api, storeDirectory: store.directory) else { return nil }
        return try SignInClient(configuration: held, storage: store, environment: c.environment).storedUser()
    }

    /// Runs an interactive sign-in; Ctrl-C, SIGTERM or a closed terminal cancel it (the listener closes and frees
    /// its port; exit 4). Once the code is being exchanged, the sign-in finishes and is saved first.
    static func signIn(_ client: SignInClient, _ opts: SignInOptions, adding scopes: [String] = []) throws(SignInError) -> SignInUser {
        let task = Task { () async throws(SignInError) -> SignInUser in try await client.signIn(additionalScopes: scopes, options: opts) }
        return try ServerLife.whileRunning(onStop: { task.cancel() }) { () throws(SignInError) -> SignInUser in
            do {
                return try blockingAwait { try await task.value }
            } catch let e as SignInError {
                throw e
            } catch {
                throw .canceled(reason: "the sign-in was canceled")
            }
        }
    }
}
