/// `--help` texts; kept beside the options they describe.
enum Help {
    static let exitCodes = """
        Exit codes (every command):
          0  success
          1  unexpected failure (including a credential store that cannot be used safely; the message says why)
          2  usage or configuration error
          3  not signed in (nothing stored, or the provider no longer accepts the stored grant)
          4  canceled (denied in the browser, Ctrl-C)
          5  network or provider error (nothing changed locally)
          6  timed out waiting for the browser
        """

    static let general = """
        signin: sign in with Google or any OpenID provider from the terminal.

        Usage: signin <command> [options]

        Commands:
          login     Sign in through the browser (or --no-browser, --device) and store the credentials
          restore   Restore the previous sign-in without a browser, refreshing if needed; print who
          whoami    Print the signed-in profile (no network)
          token     Print a fresh access token (refreshes only when needed)
          status    Offline summary: who, token expiry, granted scopes, where the store is
          logout    Remove the local credentials; --revoke also revokes the grant at the provider

        Options for every command:
          -c, --config PATH  Configuration file (default: $SIGNIN_CONFIG, else
                             $XDG_CONFIG_HOME/signin/config.json, else ~/.config/signin/config.json)
          --json             Machine-readable output on standard output
          -h, --help         Help (also `signin <command> --help`)
          --version          Print the version

        Credentials are kept encrypted in $XDG_DATA_HOME/signin (default ~/.local/share/signin).
        Configuration fields, examples and the threat model: README.md.

        """ + "\n" + exitCodes

    static func text(for command: String?) -> String {
        switch command {
        case "login":
            return """
                Usage: signin login [--no-browser] [--device] [--port N] [--timeout SECONDS] [--login-hint EMAIL] [--json]

                Opens the browser at the provider's sign-in page, receives the answer on http://127.0.0.1:<port>,
                verifies the ID token and stores the credentials encrypted. Prints "Signed in as NAME <EMAIL>".

                  --no-browser       Do not open a browser; print the address. The address the browser ends at
                                     may then be pasted on standard input (for a browser on another machine).
                                     This is also what happens over SSH or without a display.
                  --device           Sign in with a code on another device (RFC 8628), where the provider allows it
                  --port N           Listen on this loopback port (default: redirect_port, else any free port)
                  --timeout SECONDS  Give up waiting after this long (default 300)
                  --login-hint EMAIL Suggest this account to the provider

                """ + "\n" + exitCodes
        case "restore":
            return "Usage: signin restore [--min-ttl SECONDS] [--force-refresh] [--json]\n\nRestores the previous sign-in without a browser; refreshes the tokens if the access token\nexpires within --min-ttl seconds (default 60). Prints the profile.\n\n" + exitCodes
        case "whoami":
            return "Usage: signin whoami [--json]\n\nPrints the signed-in profile from the store, without network. --json gives every field.\n\n" + exitCodes
        case "token":
            return "Usage: signin token [--min-ttl SECONDS] [--force-refresh] [--json]\n\nPrints only the access token on standard output, refreshed first when it expires within\n--min-ttl seconds (default 60). No network when the stored one is fresh enough.\nParallel calls share one refresh.\n\n" + exitCodes
        case "status":
            return "Usage: signin status [--json]\n\nOffline summary: signed in or not, who, access token expiry, granted scopes, store location.\nExits 3 when not signed in.\n\n" + exitCodes
        case "logout":
            return "Usage: signin logout [--revoke] [--json]\n\nRemoves the local credentials. --revoke first revokes the grant at the provider (RFC 7009);\nif that fails the local credentials are still removed, the failure is reported and the exit code is 5.\n\n" + exitCodes
        default:
            return general
        }
    }
}
