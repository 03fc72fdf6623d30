/// Every `signin` command: its name, the options it accepts, its help text. `CLI.run` maps each to its function;
/// `Help` renders `--help`, `signin help COMMAND`, the man page and the shell completions from this one table.
enum Command: String, CaseIterable, Sendable {
    case login, restore, whoami, token
    case idToken = "id-token"
    case status, accounts, use, logout
    case exec
    case gitCredential = "git-credential"
    case kubectlCredential = "kubectl-credential"
    case key, lock
    case `init`, version, help, completion

    /// Reads a configuration (and so takes `--config` and `--profile`).
    var readsConfiguration: Bool { ![.version, .help, .completion, .`init`].contains(self) }
    /// Everything after the first non-option argument is a command to run.
    var takesCommand: Bool { self == .exec }
    /// Works on one account, named by `--account` or `$SIGNIN_ACCOUNT`.
    var takesAccount: Bool { [.login, .restore, .whoami, .token, .idToken, .status, .logout, .exec, .gitCredential, .kubectlCredential].contains(self) }

    static let noBrowser = OptionSpec("--no-browser", "Do not open a browser; print the address (paste the address it ends at back here)")
    static let device = OptionSpec("--device", "Sign in with a code on another device (RFC 8628), where the provider allows it")
    static let port = OptionSpec("--port", value: "N", "Listen on this loopback port (default: redirect_port, else any free port)")
    static let timeout = OptionSpec("--timeout", value: "SECONDS", "Give up waiting for the browser after this long (default 300)")
    static let loginHint = OptionSpec("--login-hint", value: "EMAIL", "Suggest this account to the provider (--account does the same for login)")
    static let revoke = OptionSpec("--revoke", "Also revoke the grant at the provider (RFC 7009)")
    static let all = OptionSpec("--all", "logout: every account of this configuration; accounts: every configuration")
    static let yes = OptionSpec("--yes", short: "-y", "Do not ask for confirmation")
    static let env = OptionSpec("--env", value: "NAME", "The environment variable that receives the token (default SIGNIN_ACCESS_TOKEN)")
    static let idTokenFlag = OptionSpec("--id-token", "Put the ID token there instead of the access token")
    static let loginFlag = OptionSpec("--login", "Sign in first when needed (interactively) instead of exiting 3")
    static let username = OptionSpec("--username", value: "NAME", "git-credential: the user name to answer (default: the account's e-mail)")
    static let man = OptionSpec("--man", "help: print the manual page (roff) instead")
    static let to = OptionSpec("--to", value: "STORAGE", "Where the key goes: secret-service, passphrase or file")
    static let passphraseFD = OptionSpec("--passphrase-fd", value: "N", "Read the store's passphrase from file descriptor N (for scripts)")

    var options: [OptionSpec] {
        var own: [OptionSpec]
        switch self {
        case .login: own = [Self.noBrowser, Self.device, Self.port, Self.timeout, Self.loginHint]
        case .restore, .token, .idToken: own = [.minTTL, .forceRefresh]
        case .whoami, .status, .use: own = []
        case .accounts: own = [Self.all]
        case .logout: own = [Self.revoke, Self.all, Self.yes]
        case .exec: own = [Self.env, Self.idTokenFlag, Self.loginFlag, .minTTL]
        case .gitCredential: own = [Self.username, .minTTL]
        case .kubectlCredential: own = [.minTTL]
        case .`init`: own = [.config, .profile]
        case .key: own = [Self.to]
        case .lock: own = []
        case .version: own = []
        case .help: own = [Self.man]
        case .completion: own = []
        }
        if takesAccount { own.append(.account) }
        if readsConfiguration { own += [.config, .profile, Self.passphraseFD] }
        if ![.exec, .gitCredential, .kubectlCredential, .help, .completion, .`init`].contains(self) { own.append(.json) }
        return own + [.help]
    }

    var summary: String {
        switch self {
        case .login: return "Sign in through the browser (or --no-browser, --device); add the account and make it current"
        case .restore: return "Restore the sign-in without a browser, refreshing if needed; print who"
        case .whoami: return "Print the signed-in profile (no network)"
        case .token: return "Print a fresh access token (refreshes only when needed)"
        case .idToken: return "Print a fresh OpenID Connect ID token (as gcloud auth print-identity-token)"
        case .status: return "Offline summary: who, token expiry, granted scopes, where the store is"
        case .accounts: return "List the signed-in accounts, the current one marked"
        case .use: return "Make ACCOUNT the current account"
        case .logout: return "Sign out (remove the local credentials); --revoke also ends the grant at the provider"
        case .exec: return "Run a command with a fresh token in its environment, never in its arguments"
        case .gitCredential: return "git credential helper: answer git with a fresh token as the password"
        case .kubectlCredential: return "kubectl exec credential plugin: an ExecCredential with the ID token"
        case .key: return "Where the store's key is: `signin key move --to secret-service|passphrase|file`"
        case .lock: return "Forget the unlocked store key (the kernel keyring's copy) until the next unlock"
        case .`init`: return "Write a first configuration, interactively"
        case .version: return "Print the version"
        case .help: return "Help for a command (signin help COMMAND)"
        case .completion: return "Print the shell completion script for bash, zsh or fish"
        }
    }

    var usage: String {
        let opts = options.filter { $0 != .help && $0 != .config && $0 != .profile && $0 != .json }.map { "[\($0.synopsis)]" }.joined(separator: " ")
        let tail: String
        switch self {
        case .use: tail = " ACCOUNT"
        case .exec: tail = " [--] COMMAND [ARGS...]"
        case .gitCredential: tail = " get|store|erase"
        case .help: tail = " [COMMAND]"
        case .completion: tail = " bash|zsh|fish"
        default: tail = ""
        }
        if self == .key { return "signin key move --to secret-service|passphrase|file [--passphrase-fd N]" }
        return "signin \(rawValue)" + (opts.isEmpty ? "" : " " + opts) + tail
    }

    var details: String {
        switch self {
        case .login:
            return """
                Opens the browser at the provider's sign-in page, receives the answer on http://127.0.0.1:<port>, verifies
                the ID token and stores the credentials encrypted. The account is added beside any others (or updated)
                and becomes the current one. Prints "Signed in as NAME <EMAIL>". Over SSH or without a display no
                browser is opened: the address is printed, with the ways through.
                """
        case .restore:
            return "Restores the sign-in without a browser; refreshes the tokens when the access token expires within\n--min-ttl seconds. Prints the profile. Exits 3 when signing in again is needed."
        case .whoami: return "Prints the signed-in profile from the store, without network."
        case .token:
            return "Prints only the access token on standard output, refreshed first when it expires within --min-ttl\nseconds. No network when the stored one is fresh enough. Parallel calls share one refresh."
        case .idToken:
            return "Prints only the ID token, refreshed first when it expires within --min-ttl seconds. A provider that\nsends no new ID token on refresh is an error that says so. --json adds its expiry and claims."
        case .status: return "Offline summary of one account: signed in or not, token expiry, granted scopes, where its key and file are.\nExits 3 when not signed in."
        case .accounts: return "Lists the accounts of this configuration (--all: of every configuration), the current one marked with *,\neach with e-mail, name, access-token expiry and whether the provider still accepted its grant at the last refresh."
        case .use: return "Makes ACCOUNT (an e-mail or sub) the current account of this configuration."
        case .logout:
            return "Signs out the current account (or --account, or --all) and says which. On a terminal it asks first (--yes\nskips the question). Afterwards no account is current until `signin use` or `signin login`."
        case .exec:
            return """
                Runs COMMAND with a fresh access token (--id-token: the ID token) in the environment variable NAME, never
                in its arguments. Standard input, output, error, signals and the exit status pass through. When signing
                in is needed first it exits 3 rather than open a browser in a script, unless --login is given.
                """
        case .gitCredential:
            return """
                Speaks git's credential-helper protocol on standard input and output. `get` answers username= and
                password= (a fresh access token) and password_expiry_utc; `erase` (git reports the password was
                rejected) makes the next `get` refresh first; `store` does nothing. `get` answers only the hosts in
                git_hosts (Google's source hosts by default for Google) and plain http only to this machine.
                Configure with (the empty line first keeps other helpers from storing the token)
                  git config --global credential.https://HOST.helper ''
                  git config --global --add credential.https://HOST.helper '!signin git-credential'
                """
        case .kubectlCredential:
            return """
                An ExecCredential (client.authentication.k8s.io v1, or v1beta1 as $KUBERNETES_EXEC_INFO asks) with a fresh
                ID token and its expiry, for kubeconfig's users[].user.exec. Signs in interactively only when kubectl says
                the session is interactive.
                """
        case .key:
            return """
                `signin key move --to STORAGE` makes a new store key and keeps it in the Secret Service (GNOME Keyring,
                KWallet, KeePassXC), under a passphrase (scrypt, asked twice, at least 8 characters), or in a file beside
                the entries; every entry is encrypted again under it, so the old key opens nothing written after. A move
                is journaled: interrupted anywhere, the next command finishes it or rolls it back. `status` says where
                the key is now.
                """
        case .lock: return "Drops the unlocked store key from the kernel keyring. The next command unlocks it again\n(the Secret Service, or the passphrase)."
        case .`init`: return "Asks for a client ID and secret (Google) or an issuer (any OpenID provider, checked by discovery) and\nwrites the configuration file, mode 0600. Never overwrites a file without asking."
        case .version: return "Prints the version (--json: as JSON)."
        case .help: return "Prints help for COMMAND, or the list of commands."
        case .completion: return "Prints a completion script: `source <(signin completion bash)`, or see `signin --help`."
        }
    }

    /// The command whose name is nearest to a mistyped one.
    static func suggestion(for word: String) -> String? {
        Suggest.nearest(word, among: allCases.map(\.rawValue))
    }
}
