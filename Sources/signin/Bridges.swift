import FoundationEssentials
@_spi(CLI) import SignInKit

#if canImport(Glibc)
import Glibc
#endif

/// The bridges that hand signin's tokens to other programs. Each goes through the same library path as
/// `signin token` (`SignInClient.restore`): one refresh for many parallel callers, the same exit codes, no
/// secret in an error, never a token in another process's arguments.
enum Bridges {
    /// A fresh token of the account, or, when signing in is needed and allowed, a sign-in first.
    ///
    /// 1. Restore (no browser): a fresh token, refreshed when it expires within `--min-ttl`.
    /// 2. Not signed in (exit 3): with `interactive`, say so on standard error and sign in through the browser,
    ///    then use the new sign-in's token; otherwise throw, so a script is never stopped by a browser.
    static func freshUser(_ c: Context, token: TokenKind, interactive: Bool) throws(SignInError) -> SignInUser {
        do {
            return try c.restore(token)
        } catch .noPreviousSignIn(let reason) {
            guard interactive else { throw .noPreviousSignIn(reason: reason) }
            err("signin: signing in is needed first (\(reason.description.withoutControlCharacters)).")
            var opts = SignInOptions()
            opts.openBrowser = !c.browsing.headless
            opts.loginHint = c.account
            _ = try Commands.signIn(c.client, opts)
            return try c.restore(token, forceRefresh: false)
        }
    }

    // MARK: exec

    /// `signin exec [--env NAME] [--id-token] [--login] -- COMMAND [ARGS...]`: the token goes into COMMAND's
    /// environment, then signin *becomes* COMMAND (execvp): standard streams, signals, the terminal and the exit
    /// status are COMMAND's own, exactly as if it ran alone. Nothing of signin stays in between.
    static func exec(_ c: Context) throws(SignInError) -> ExitCode {
        let a = c.arguments
        let kind: TokenKind = a.has(Command.idTokenFlag) ? .id : .access
        let user = try freshUser(c, token: kind, interactive: a.has(Command.loginFlag))
        guard let token = (kind == .id ? user.idToken : user.accessToken)?.value else {
            throw .noPreviousSignIn(reason: .noToken(kind))
        }
        let name = a.value(Command.env) ?? "SIGNIN_ACCESS_TOKEN"
        setenv(name, token, 1)
        // What signin changed for itself goes back to what COMMAND expects: an empty signal mask and default
        // dispositions (but what our own parent had us ignore), whichever thread signed in and whatever it held.
        ProcessHardening.resetSignalsForExec()
        // The passphrase's descriptor was for signin: COMMAND must not read it again through /proc/self/fd.
        if let fd = a.value(Command.passphraseFD).flatMap({ Int32($0) }), fd > 2 { close(fd) }
        let argv = a.rest
        // As shells do: 127 when the command is not found, 126 when it is there but cannot be run.
        guard argv[0].contains("/") || (c.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":").contains(where: { access("\($0)/\(argv[0])", F_OK) == 0 }) else {
            unsetenv(name)
            err("signin: \(argv[0].withoutControlCharacters): command not found")
            return ExitCode(rawValue: 127)
        }
        var cargs: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        execvp(argv[0], &cargs)
        let e = errno
        unsetenv(name)
        err("signin: cannot run \(argv[0].withoutControlCharacters): \(String(cString: strerror(e)))")
        return ExitCode(rawValue: e == ENOENT ? 127 : 126)
    }

    // MARK: git

    /// git's credential-helper protocol (gitcredentials(7)): attributes on standard input until a blank line;
    /// `get` answers username and password (a fresh access token) and the token's expiry; `erase` (git says the
    /// password was refused) makes the next `get` refresh first; `store` does nothing (signin keeps its own).
    static func gitCredential(_ c: Context) throws(SignInError) -> ExitCode {
        var attributes: [String: String] = [:]
        while let line = readLine(), !line.isEmpty {
            guard let eq = line.firstIndex(of: "=") else { continue }
            attributes[String(line[..<eq])] = String(line[line.index(after: eq)...])
        }
        switch c.arguments.positional[0] {
        case "get":
            // The token goes only to the hosts the configuration names, and over plain http only to this machine.
            let host = attributes["host"] ?? ""
            let patterns = GitHosts.patterns(for: c.client.configuration)
            guard GitHosts.allows(host, patterns: patterns) else {
                err("signin: git-credential gives no token to \"\(host.withoutControlCharacters)\": it is not in git_hosts of \(c.client.configuration.sourcePath) (" +
                    (patterns.isEmpty ? "none is allowed" : "allowed: " + patterns.joined(separator: ", ")) + "). To allow it, add \"git_hosts\": [\"\(host.withoutControlCharacters)\"] there.")
                return .usage
            }
            if attributes["protocol"] == "http" && !GitHosts.isLoopback(host) {
                err("signin: git-credential gives no token over plain http to \"\(host.withoutControlCharacters)\" (anyone on the way could read it); use https.")
                return .usage
            }
            let user = try freshUser(c, token: .access, interactive: false)
            guard let token = user.accessToken else { throw .noPreviousSignIn(reason: .noToken(.access)) }
            let username = c.arguments.value(Command.username) ?? c.client.configuration.gitUsername ?? user.profile.email ?? user.userID
            var answer = "username=\(username.withoutControlCharacters)\npassword=\(token.value)\n"
            if let exp = token.expirationDate { answer += "password_expiry_utc=\(Int(exp.timeIntervalSince1970))\n" }
            writeAll(1, answer)
        case "erase":
            if let rejected = attributes["password"] { try c.client.markAccessTokenRejected(rejected, account: c.account) }
        default:
            break  // store: the credentials live in signin's own store
        }
        return .success
    }

    // MARK: kubectl

    /// A kubectl exec credential plugin (client.authentication.k8s.io): prints an ExecCredential with a fresh ID
    /// token (what Kubernetes' OIDC authenticator takes) and its expiry, in the API version kubectl asks for in
    /// `$KUBERNETES_EXEC_INFO` (v1, or v1beta1 for older kubectl). Signs in through the browser only when kubectl
    /// says the session is interactive; otherwise exits 3 with the reason on standard error.
    static func kubectlCredential(_ c: Context) throws(SignInError) -> ExitCode {
        let version = KubectlCredential.apiVersion(c.environment)
        let user = try freshUser(c, token: .id, interactive: KubectlCredential.interactive(c.environment))
        guard let token = user.idToken else { throw .noPreviousSignIn(reason: .noToken(.id)) }
        var status: [String: JSONValueOut] = ["token": .string(token.value)]
        if let exp = token.expirationDate { status["expirationTimestamp"] = .string(iso8601(exp)) }
        out(JSONText.object(["apiVersion": .string(version), "kind": .string("ExecCredential"), "status": .object(status)]))
        return .success
    }
}

/// What kubectl tells its exec plugins in `$KUBERNETES_EXEC_INFO`.
enum KubectlCredential {
    struct ExecInfo {
        struct Spec { let interactive: Bool? }
        let apiVersion: String?
        let spec: Spec?
    }

    static func decoded(_ env: [String: String]) -> ExecInfo? {
        guard let text = env["KUBERNETES_EXEC_INFO"], let o = JSONValue.object(from: Data(text.utf8)) else { return nil }
        var spec: ExecInfo.Spec?
        if case .object(let s)? = o["spec"] { spec = ExecInfo.Spec(interactive: s["interactive"].flatMap { if case .bool(let b) = $0 { b } else { nil } }) }
        return ExecInfo(apiVersion: o["apiVersion"]?.string, spec: spec)
    }

    /// The version kubectl asked for; v1 when it did not say (kubectl 1.22+ always says).
    static func apiVersion(_ env: [String: String]) -> String {
        let asked = decoded(env)?.apiVersion ?? ""
        return ["client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1"].contains(asked) ? asked : "client.authentication.k8s.io/v1"
    }

    /// kubectl says whether a person is there (`spec.interactive`); without that, never.
    static func interactive(_ env: [String: String]) -> Bool { decoded(env)?.spec?.interactive == true }
}
