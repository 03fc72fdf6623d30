import SignInKit

/// `--help`, `signin help COMMAND` and the manual page, all from the commands' own declarations (`Commands.all`),
/// so they cannot drift.
enum Help {
    static let commonOptions: [OptionSpec] = [.config, .profile, .json, .help]

    static var general: String {
        let width = Commands.specs.map(\.name.count).max()!
        let commands = Commands.specs.map { "  \($0.name.padding(to: width))  \($0.summary)" }.joined(separator: "\n")
        return """
            signin: sign in from the terminal to Google, any OpenID provider, any OAuth 2.0 server or any MCP server
            (from its address alone: login --resource URL), and hand its tokens to scripts, git, kubectl, MCP clients
            (signin mcp URL) and any command.

            Usage: signin <command> [options]

            Commands:
            \(commands)

            Options most commands take:
            \(optionLines(commonOptions + [.account, OptionSpec("--version", "Print the version (--json: as JSON)")]))

            Run `signin help COMMAND` (or `signin COMMAND --help`) for a command's options.

            Files: the configuration is --config PATH, else --profile NAME ($XDG_CONFIG_HOME/signin/NAME.json),
            else $SIGNIN_CONFIG, else $SIGNIN_PROFILE, else $XDG_CONFIG_HOME/signin/config.json
            (~/.config/signin/config.json). Credentials are kept encrypted in $XDG_DATA_HOME/signin
            (~/.local/share/signin). `signin init` writes a first configuration.

            \(ExitCode.table)

            The manual: man signin (installed by scripts/install).
            """
    }

    static func text(for command: CommandSpec) -> String {
        """
        Usage: \(command.usage)

        \(command.details)

        Options:
        \(optionLines(command.options))

        Exit codes: see `signin --help`.
        """
    }

    static func optionLines(_ options: [OptionSpec]) -> String {
        let width = options.map(\.synopsis.count).max() ?? 0
        return options.map { "  \($0.synopsis.padding(to: width))  \($0.help)" }.joined(separator: "\n")
    }

    /// signin(1) in roff, generated from the same table as `--help`.
    static var manPage: String {
        func esc(_ s: String) -> String {
            s.replacing("\\", with: "\\e").replacing("-", with: "\\-").split(separator: "\n", omittingEmptySubsequences: false)
                .map { $0.hasPrefix(".") || $0.hasPrefix("'") ? "\\&" + $0 : String($0) }.joined(separator: "\n")
        }
        var m = """
            .TH SIGNIN 1 "" "signin \(SignInKitVersion.string)" "User Commands"
            .SH NAME
            signin \\- sign in from the terminal to Google, any OpenID provider, OAuth 2.0 server or MCP server
            .SH SYNOPSIS
            .B signin
            .I command
            [\\fIoptions\\fR]
            .SH DESCRIPTION
            signin opens the browser at the provider's sign-in page, receives the answer on a loopback listener,
            verifies the ID token and keeps the credentials encrypted. Later commands restore the sign-in without a
            browser and hand out fresh tokens to scripts, git, kubectl and any command.
            .SH COMMANDS

            """
        for c in Commands.specs {
            m += ".SS \(esc(c.usage))\n\(esc(c.details))\n"
            for o in c.options where !commonOptions.contains(o) && o != .account {
                m += ".TP\n.B \(esc(o.synopsis))\n\(esc(o.help))\n"
            }
        }
        m += ".SH OPTIONS\n"
        for o in commonOptions + [.account] { m += ".TP\n.B \(esc(o.synopsis))\n\(esc(o.help))\n" }
        m += """
            .SH ENVIRONMENT
            .TP
            .B SIGNIN_CONFIG, SIGNIN_PROFILE
            The configuration file, or the name of one in $XDG_CONFIG_HOME/signin.
            .TP
            .B SIGNIN_ACCOUNT
            The account to use when \\-\\-account is not given.
            .TP
            .B BROWSER
            The browser command (the URL is its last argument, or replaces %s).
            .SH FILES
            .TP
            .I ~/.config/signin/config.json
            The default configuration ($XDG_CONFIG_HOME/signin).
            .TP
            .I ~/.local/share/signin/
            The encrypted credentials and their key ($XDG_DATA_HOME/signin).
            .SH EXIT STATUS

            """
        for line in ExitCode.table.split(separator: "\n").dropFirst() {
            let t = String(line).trimmingWhitespace
            if let space = t.firstIndex(of: " "), t.first?.isNumber == true {
                m += ".TP\n.B \(t[..<space])\n\(esc(String(t[space...]).trimmingWhitespace))\n"
            } else {
                m += ".PP\n\(esc(t))\n"
            }
        }
        return m + ".SH SEE ALSO\ngit\\-credential(1), kubectl(1)\n"
    }
}
