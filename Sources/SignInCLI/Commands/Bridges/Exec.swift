import FoundationEssentials
import SignInKit

#if canImport(Glibc)
import Glibc
#endif

/// `signin exec [--env NAME] [--id-token] [--login] [--gce-metadata] -- COMMAND [ARGS...]`.
struct Exec: SignInCommand {
    static let gceMetadataOption = OptionSpec("--gce-metadata", "Serve COMMAND a Google metadata server (gcloud, Google client libraries) instead of a token variable")
    static let verboseOption = OptionSpec("--verbose", "With --gce-metadata: log each request to the metadata server (path and status, never a token)")
    static let envOption = OptionSpec("--env", value: "NAME", "The environment variable that receives the token (default SIGNIN_ACCESS_TOKEN)")
    static let idTokenOption = OptionSpec("--id-token", "Put the ID token there instead of the access token")
    static let tokenFileOption = OptionSpec("--token-file", "Give COMMAND the token in a file kept fresh while it runs (SIGNIN_TOKEN_FILE names it), not in a variable")
    static let fileEnvOption = OptionSpec("--file-env", value: "NAME", "With --token-file: also name the file in NAME (AWS_WEB_IDENTITY_TOKEN_FILE, AZURE_FEDERATED_TOKEN_FILE...); again for more")
    static let loginOption = OptionSpec("--login", "Sign in first when needed (interactively) instead of exiting 3")
    static let spec = CommandSpec(
        of: Self.self, options: MinimumValidity.options + Impersonation.options + TokenTarget.options + [Exec.envOption, Exec.idTokenOption, Exec.loginOption, Exec.tokenFileOption, Exec.fileEnvOption, Exec.gceMetadataOption, Exec.verboseOption, .passphraseFD], summary: "Run a command with a fresh token in its environment, never in its arguments",
        details: """
            Runs COMMAND with a fresh access token (--id-token: the ID token) in the environment variable NAME, never
            in its arguments. Standard input, output, error, signals and the exit status pass through. When signing
            in is needed first it exits 3 rather than open a browser in a script, unless --login is given.
            With --gce-metadata, COMMAND instead finds a Google Compute Engine metadata server on 127.0.0.1
            (GCE_METADATA_HOST, GCE_METADATA_IP and GCE_METADATA_ROOT are set), from which gcloud and every Google
            client library take your account, project and tokens; signin stays, passes signals on, and exits with
            COMMAND's status. With --impersonate-service-account, the service account's tokens instead.
            With --token-file, COMMAND reads the token from a 0600 file in your runtime folder (its path in
            SIGNIN_TOKEN_FILE and each --file-env NAME), which signin rewrites atomically before each expiry for as
            long as COMMAND runs and removes when it ends. SIGNIN_TOKEN_TYPE (either way) says Bearer, or DPoP for a grant bound to
            this machine's key: then COMMAND sends `Authorization: DPoP <token>` with a proof from `signin dpop-proof`.
            With --resource or --audience, the access token for that API (as `signin token` gives it).
            """,
        usageTail: " [--] COMMAND [ARGS...]", takesAccount: true,
        takesJSON: false, takesArguments: true, takesCommand: true)

    let kind: TokenKind
    let login: Bool
    let variable: String
    let minTTL: Int
    let command: [String]
    let passphraseFD: Int32?
    let gceMetadata: Bool
    let verbose: Bool
    let chain: [String]?
    /// `--token-file`, with the variables that name the file besides SIGNIN_TOKEN_FILE.
    let tokenFile: Bool
    let fileVariables: [String]
    /// `--resource`, `--audience`: the access token for one API.
    let target: TokenTarget

    init(_ a: Arguments, _ env: [String: String]) throws(UsageError) {
        // Every option read first (their order is help's), then the checks.
        minTTL = try MinimumValidity(a).seconds
        chain = Impersonation(a).chain
        target = TokenTarget(a)
        let env = a.value(Self.envOption)
        let idToken = a.has(Self.idTokenOption)
        login = a.has(Self.loginOption)
        tokenFile = a.has(Self.tokenFileOption)
        fileVariables = a.all(Self.fileEnvOption)
        gceMetadata = a.has(Self.gceMetadataOption)
        verbose = a.has(Self.verboseOption)
        passphraseFD = a.value(.passphraseFD).flatMap { Int32($0) }
        kind = idToken ? .id : .access
        if target.isSet && (kind == .id || gceMetadata) {
            throw UsageError("--resource and --audience ask for an access token for one API; they take no --id-token and no --gce-metadata")
        }
        variable = env ?? "SIGNIN_ACCESS_TOKEN"
        if !Self.isVariableName(variable) {
            throw UsageError("--env \"\(variable)\" is not an environment variable name (letters, digits and _)")
        }
        command = a.rest
        if command.isEmpty { throw UsageError("`signin exec` needs a command to run: signin exec [--env NAME] -- COMMAND [ARGS...]") }
        if gceMetadata && (idToken || env != nil) {
            throw UsageError("--gce-metadata serves tokens to COMMAND through the metadata server; it takes no --env or --id-token")
        }
        if verbose && !gceMetadata { throw UsageError("--verbose goes with --gce-metadata (it logs the metadata server's requests)") }
        if !tokenFile && !fileVariables.isEmpty { throw UsageError("--file-env names the file of --token-file; add --token-file") }
        if tokenFile && (gceMetadata || env != nil) {
            throw UsageError("--token-file gives COMMAND a file; it takes no --env (the file's variables are --file-env) and no --gce-metadata")
        }
        if let bad = fileVariables.first(where: { !Self.isVariableName($0) }) {
            throw UsageError("--file-env \"\(bad.withoutControlCharacters)\" is not an environment variable name (letters, digits and _)")
        }
    }

    /// An environment variable's name: letters, digits and _, not starting with a digit.
    static func isVariableName(_ v: String) -> Bool {
        !v.isEmpty && !v.first!.isNumber && v.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
    }

    func run(_ r: CommandRun) throws -> ExitCode {
        if let agent = r.agent, let answered = try run(through: agent) { return answered }
        return try run(in: r.context(signsIn: login, resource: target.signInResource))
    }

    /// `signin exec [--env NAME] [--id-token] [--login] -- COMMAND [ARGS...]`: the token goes into COMMAND's
    /// environment, then signin *becomes* COMMAND (execvp): standard streams, signals, the terminal and the exit
    /// status are COMMAND's own, exactly as if it ran alone. Nothing of signin stays in between.
    func run(in c: Context) throws(SignInError) -> ExitCode {
        if gceMetadata { return try GCEMetadataRun(c, chain: chain, login: login, verbose: verbose, passphraseFD: passphraseFD).run(command) }
        let source = LocalTokens(c: c, chain: chain, interactive: login)
        if tokenFile {
            return try TokenFileRun(source: source, kind: kind, target: target, minTTL: minTTL, environment: c.environment, io: c.io)
                .run(command, variables: fileVariables, environment: c.environment, closing: passphraseFD.map { [$0] } ?? [])
        }
        return try become(source, environment: c.environment)
    }

    func run(through agent: AgentTokens) throws(SignInError) -> ExitCode? {
        if gceMetadata {
            throw .unsupported(reason: "exec --gce-metadata serves a metadata server from the grant, which stays on the machine the agent runs on; run it there, or use `signin exec -- COMMAND` here")
        }
        let env = ProcessEnvironment.current
        let source = agent.impersonating(chain)
        if tokenFile {
            return try TokenFileRun(source: source, kind: kind, target: target, minTTL: minTTL, environment: env, io: agent.io)
                .run(command, variables: fileVariables, environment: env, closing: [])
        }
        return try become(source, environment: env)
    }

    private func become(_ source: some TokenSource, environment: [String: String]) throws(SignInError) -> ExitCode {
        let io = source.io
        let issued = try source.token(kind, Freshness(minTTL: minTTL), for: target)
        let (type, token) = try issued.presented(to: .typed)
        let name = variable
        Posix.setenv(name, token, 1)
        // A DPoP-bound token is useless without proofs: COMMAND learns it must send `Authorization: DPoP` with one
        // from `signin dpop-proof` (the key stays with signin).
        Posix.setenv("SIGNIN_TOKEN_TYPE", type, 1)
        // The passphrase's descriptor was for signin: COMMAND must not read it again through /proc/self/fd.
        if let fd = passphraseFD, fd > 2 { Posix.close(fd) }
        let argv = command
        // As shells do: 127 when the command is not found, 126 when it is there but cannot be run.
        guard ExecCommand.locate(argv, environment: environment, executable: false, io) != nil else {
            Posix.unsetenv(name)
            return ExecCommand.notFound
        }
        // What signin changed for itself goes back to what COMMAND expects: an empty signal mask and default
        // dispositions (but what our own parent had us ignore), whichever thread signed in and whatever it held.
        let e = ProcessHardening.replacingImage(path: argv[0], arguments: argv, searchPath: true)
        Posix.unsetenv(name)
        return ExecCommand.cannotRun(argv, e, io)
    }
}
