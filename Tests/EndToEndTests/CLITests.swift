import Foundation
import Testing

/// The command line as a newcomer meets it: help, mistakes, the installed layout, completions, questions.
@Suite struct CLITests {
    func run(_ args: String..., env: [String: String] = [:]) throws -> RunResult {
        try Subprocess.run(Paths.signin, args, env: ["PATH": "/usr/bin:/bin", "HOME": NSTemporaryDirectory()].merging(env) { $1 })
    }

    @Test func helpForACommandListsItsOptionsAlignedAndTheGeneralHelpHasTheExitCodesOnce() throws {
        let viaHelp = try run("help", "logout")
        let viaFlag = try run("logout", "--help")
        #expect(viaHelp.status == 0 && viaHelp.stdout == viaFlag.stdout)
        for option in ["--revoke", "--all", "-y, --yes", "--account ACCOUNT", "-c, --config PATH", "--json"] {
            #expect(viaHelp.stdout.contains("  \(option)"), "\(option)")
        }
        let optionLines = viaHelp.stdout.split(separator: "\n").filter { $0.hasPrefix("  -") }
        let columns = Set(optionLines.map { line in line.range(of: #"^  \S+( \S+)*\s{2,}"#, options: .regularExpression).map { line.distance(from: line.startIndex, to: $0.upperBound) } ?? 0 })
        #expect(columns.count == 1, "help texts start in one column: \(optionLines)")
        #expect(!viaHelp.stdout.contains("4  canceled"), "the exit-code table is in `signin --help` only")
        let general = try run("--help")
        #expect(general.stdout.contains("4  canceled") && general.stdout.contains("man signin"))
        for c in ["login", "id-token", "exec", "git-credential", "kubectl-credential", "accounts", "use", "init"] {
            #expect(general.stdout.contains("  \(c) "), "\(c) in --help")
        }
    }

    @Test func mistakesAreExit2WithTheNearestSpelling() throws {
        var r = try run("logni")
        #expect(r.status == 2 && r.stderr.contains("did you mean `login`?"))
        r = try run("token", "--min-tll", "5")
        #expect(r.status == 2 && r.stderr.contains("did you mean --min-ttl?"), "\(r.stderr)")
        r = try run("whoami", "--revoke")
        #expect(r.status == 2 && r.stderr.contains("`signin whoami` does not take --revoke"))
        r = try run("login", "--device", "--no-browser")
        #expect(r.status == 2 && r.stderr.contains("choose one"))
        r = try run("logout", "--all", "--account", "a@b")
        #expect(r.status == 2)
        r = try run("token", "--min-ttl", "soon")
        #expect(r.status == 2 && r.stderr.contains("--min-ttl must be a whole number"))
        r = try run("--version", "--json")
        #expect(r.status == 0 && r.stdout.hasPrefix(#"{"version":""#))
    }

    @Test func aMissingOrBrokenConfigurationSaysWhatToDo() throws {
        let dir = NSTemporaryDirectory() + "signin-cli-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var r = try run("whoami", env: ["XDG_CONFIG_HOME": dir, "XDG_DATA_HOME": dir + "/data"])
        #expect(r.status == 2 && r.stderr.contains("\(dir)/signin/config.json") && r.stderr.contains("signin init"), "\(r.stderr)")
        try "{\n  \"client_id\": \"x\"\n  \"issuer\": \"https://a\"\n}".write(toFile: dir + "/c.json", atomically: true, encoding: .utf8)
        r = try run("whoami", "-c", dir + "/c.json")
        #expect(r.status == 2 && r.stderr.contains("line 3, column 3"), "\(r.stderr)")
        // Commands on a store that never held anything create no files.
        try #"{"client_id": "x", "issuer": "https://accounts.google.com"}"#.write(toFile: dir + "/ok.json", atomically: true, encoding: .utf8)
        for cmd in ["status", "token", "logout", "accounts", "whoami"] {
            _ = try run(cmd, "-c", dir + "/ok.json", env: ["XDG_DATA_HOME": dir + "/data"])
        }
        #expect(!FileManager.default.fileExists(atPath: dir + "/data"), "nothing created")
    }

    @Test func initWritesAPrivateConfigurationAndNeverOverwritesWithoutAsking() throws {
        let dir = NSTemporaryDirectory() + "signin-init-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let env = ["XDG_CONFIG_HOME": dir]
        var r = try Subprocess.run(Paths.signin, ["init", "--profile", "work"], env: env.merging(["HOME": dir]) { $1 },
                                   stdin: Data("1\n42-abc.apps.googleusercontent.com\nGOCSPX-x\n\n".utf8))
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("Desktop app") && r.stderr.contains("console.cloud.google.com"))
        let path = dir + "/signin/work.json"
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int == 0o600)
        let obj = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any]
        #expect(obj?["client_id"] as? String == "42-abc.apps.googleusercontent.com")
        #expect(obj?["scopes"] as? [String] == ["openid", "email", "profile"])
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        r = try Subprocess.run(Paths.signin, ["init", "--profile", "work"], env: env.merging(["HOME": dir]) { $1 }, stdin: Data("1\nother\n\n\n".utf8))
        #expect(r.status == 2 && r.stderr.contains("nothing was changed"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        // Another provider: its issuer is checked by discovery first.
        let strict = try Shared.strict.get()
        r = try Subprocess.run(Paths.signin, ["init", "--profile", "corp"], env: env.merging(["HOME": dir]) { $1 },
                               stdin: Data("2\n\(strict.issuer)\ncorp-client\n\n\n".utf8))
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("Found \(strict.issuer)'s discovery document"))
        // A wrong answer is said and asked again: a provider number that is not one, an issuer that does not
        // answer, a Google client ID that is not one; the file is written one field a line.
        r = try Subprocess.run(Paths.signin, ["init", "--profile", "again"], env: env.merging(["HOME": dir]) { $1 },
                               stdin: Data("3\n2\nhttp://127.0.0.1:9/nothing-here\n\(strict.issuer)\nc\n\n\n".utf8))
        #expect(r.status == 0 && r.stderr.contains("Answer 1 (Google) or 2") && r.stderr.contains("Could not use http://127.0.0.1:9/nothing-here"), "\(r.stderr)")
        let written = try String(contentsOfFile: dir + "/signin/again.json", encoding: .utf8)
        #expect(written.hasPrefix("{\n  \"issuer\": ") && written.contains(",\n  \"client_id\": \"c\""), "\(written)")
        r = try Subprocess.run(Paths.signin, ["init", "--profile", "g"], env: env.merging(["HOME": dir]) { $1 },
                               stdin: Data("1\nnotanid\n42-x.apps.googleusercontent.com\n\n\n".utf8))
        #expect(r.status == 0 && r.stderr.contains("ends in .apps.googleusercontent.com"), "\(r.stderr)")
        // Out of answers (or </dev/null): said, exit 2, nothing written.
        for input in ["", "2\nhttp://127.0.0.1:9/nothing-here\n"] {
            r = try Subprocess.run(Paths.signin, ["init", "--profile", "bad"], env: env.merging(["HOME": dir]) { $1 }, stdin: Data(input.utf8))
            #expect(r.status == 2 && r.stderr.contains("standard input ended") && !FileManager.default.fileExists(atPath: dir + "/signin/bad.json"), "\(r.stderr)")
        }
    }

    /// On a terminal: the client secret is not echoed, and Ctrl-C is a cancel (exit 4) that writes nothing.
    @Test func initHidesTheSecretAndCtrlCCancels() throws {
        let dir = NSTemporaryDirectory() + "signin-init-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let env = ["XDG_CONFIG_HOME": dir, "HOME": dir, "PATH": "/usr/bin:/bin"]
        // The provider's kind, the client ID, the secret (its prompt hides it), the scopes.
        let answered = try Terminal.run([Paths.signin, "init", "--profile", "tFalse"],
                                        steps: ["wait:: ", "send:1", "wait:: ", "send:42-x.apps.googleusercontent.com", "wait:: ", "hidden",
                                                "send:GOCSPX-very-secret", "wait:: ", "send:"], env: env)
        #expect(!answered.output.contains("GOCSPX-very-secret") && answered.exit == 0, "\(answered)")
        let canceled = try Terminal.run([Paths.signin, "init", "--profile", "tTrue"], steps: ["wait:: ", "send:1", "wait:: ", "ctrl-c"], env: env)
        #expect(canceled.exit == 4 && canceled.output.contains("canceled"), "\(canceled)")
        #expect(FileManager.default.fileExists(atPath: dir + "/signin/tFalse.json") && !FileManager.default.fileExists(atPath: dir + "/signin/tTrue.json"))
    }

    /// `signin logout` on a terminal asks first; answered through a real pseudo-terminal (`script`).
    @Test(arguments: [("y", true), ("n", false), ("", false)]) func logoutAsksOnATerminal(answer: String, signsOut: Bool) throws {
        let strict = try Shared.strict.get()
        let box = try strict.signedInSandbox()
        let command = "printf '\(answer)\\n' | script -qec '\(Paths.signin) logout' /dev/null"
        let r = try Subprocess.run("/bin/sh", ["-c", command], env: box.environment)
        #expect(r.stdout.contains("Sign out Alice Example <alice@example.org>? [y/N]"), "\(r.stdout)")
        #expect((box.entryFile() == nil) == signsOut, "\(r.stdout)")
        // Without a terminal it never asks.
        if !signsOut {
            let quiet = try box.signin("logout")
            #expect(quiet.status == 0 && !quiet.stderr.contains("[y/N]"))
            #expect(box.entryFile() == nil)
        }
        let revoke = try strict.signedInSandbox()
        let withRevoke = try Subprocess.run("/bin/sh", ["-c", "printf 'n\\n' | script -qec '\(Paths.signin) logout --revoke' /dev/null"], env: revoke.environment)
        #expect(withRevoke.stdout.contains("also ends the grant at the provider"))
    }

    /// The installed layout in a temporary PREFIX, and each shell's completion loaded and answering.
    @Test func installPutsBinaryManPageAndCompletionsInPlaceAndUninstallRemovesThem() throws {
        let prefix = NSTemporaryDirectory() + "signin-prefix-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: prefix) }
        let install = Paths.repo.appendingPathComponent("scripts/install").path
        var r = try Subprocess.run(install, ["--prefix", prefix], env: ["PATH": "/usr/bin:/bin", "HOME": prefix, "SIGNIN_INSTALL_BINARY": Paths.signin])
        #expect(r.status == 0, "\(r.stderr)")
        for f in ["bin/signin", "bin/docker-credential-signin", "share/man/man1/signin.1", "share/bash-completion/completions/signin", "share/zsh/site-functions/_signin",
                  "share/fish/vendor_completions.d/signin.fish"] {
            #expect(FileManager.default.fileExists(atPath: "\(prefix)/\(f)"), "\(f)")
        }
        // docker's name for the helper runs `signin docker-credential` (no configuration is needed for store).
        let helper = try Subprocess.run("\(prefix)/bin/docker-credential-signin", ["store"], env: ["PATH": "/usr/bin:/bin", "HOME": prefix], stdin: Data("{}".utf8))
        #expect(helper.status == 0, "\(helper.stderr)")
        let helperHelp = try Subprocess.run("\(prefix)/bin/docker-credential-signin", ["--help"], env: ["PATH": "/usr/bin:/bin", "HOME": prefix])
        #expect(helperHelp.stdout.contains("Usage: signin docker-credential"), "\(helperHelp.stdout)")
        // The manual renders, and carries the same command texts as --help.
        let man = try Subprocess.run("/usr/bin/man", ["-l", "-P", "cat", "\(prefix)/share/man/man1/signin.1"], env: ["PATH": "/usr/bin:/bin", "MANWIDTH": "120"])
        #expect(man.status == 0 && man.stdout.contains("kubectl-credential") && man.stdout.contains("EXIT STATUS"), "\(man.stderr)")

        let bin = "\(prefix)/bin"
        let bash = try Subprocess.run("/bin/bash", ["-c", "source \(prefix)/share/bash-completion/completions/signin; COMP_WORDS=(signin lo); COMP_CWORD=1; _signin; echo \"${COMPREPLY[*]}\"; COMP_WORDS=(signin token --m); COMP_CWORD=2; _signin; echo \"${COMPREPLY[*]}\""],
                                      env: ["PATH": "\(bin):/usr/bin:/bin"])
        #expect(bash.stdout == "login logout lock\n--min-ttl\n", "\(bash.stdout) \(bash.stderr)")
        let zsh = try Subprocess.run("/usr/bin/zsh", ["-c", "autoload -U compinit; compinit -u; source \(prefix)/share/zsh/site-functions/_signin; setopt ksharrays; COMP_WORDS=(signin lo); COMP_CWORD=1; _signin; echo \"${(M)COMPREPLY[@]:#lo*}\""],
                                     env: ["PATH": "\(bin):/usr/bin:/bin", "HOME": prefix])
        // zsh's own matcher then keeps what starts with the word typed (bashcompinit's compgen leaves that to it).
        #expect(zsh.stdout.hasSuffix("login logout lock\n"), "\(zsh.stdout) \(zsh.stderr)")
        let fish = try Subprocess.run("/usr/bin/fish", ["-N", "-c", "source \(prefix)/share/fish/vendor_completions.d/signin.fish; complete -C 'signin lo'; complete -C 'signin logout --re'"],
                                      env: ["PATH": "\(bin):/usr/bin:/bin", "HOME": prefix])
        #expect(fish.stdout.contains("login\t") && fish.stdout.contains("logout\t") && fish.stdout.contains("--revoke\t"), "\(fish.stdout) \(fish.stderr)")

        try FileManager.default.createDirectory(atPath: "\(prefix)/.local/share/signin", withIntermediateDirectories: true)
        r = try Subprocess.run(install, ["--uninstall", "--prefix", prefix], env: ["PATH": "/usr/bin:/bin", "HOME": prefix])
        #expect(r.status == 0)
        #expect(!FileManager.default.fileExists(atPath: "\(prefix)/bin/signin"))
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: "\(prefix)/bin/docker-credential-signin")) == nil)
        // The folders it made are gone; what is left is said, with how to remove it.
        for d in ["bin", "share/man", "share/bash-completion", "share/zsh", "share/fish"] { #expect(!FileManager.default.fileExists(atPath: "\(prefix)/\(d)"), "\(d) left") }
        #expect(r.stdout.contains("left in place:") && r.stdout.contains("\(prefix)/.local/share/signin"), "\(r.stdout)")
        r = try Subprocess.run(install, ["--uninstall", "--prefix", prefix], env: ["PATH": "/usr/bin:/bin", "HOME": prefix])
        #expect(r.status == 0 && !r.stdout.contains("removed") && r.stdout.contains("nothing of signin's was installed"), "\(r.stdout)")
    }

    /// Completion of `--account` offers the stored accounts.
    @Test func accountCompletionOffersStoredAccounts() throws {
        let strict = try Shared.strict.get()
        let box = try strict.signedInSandbox()
        _ = try box.signin("login", env: ["STANDIN_SUB": "bob"])
        let script = box.root.appendingPathComponent("completion.bash").path
        try (try box.signin("completion", "bash").stdout).write(toFile: script, atomically: true, encoding: .utf8)
        let dir = URL(fileURLWithPath: Paths.signin).deletingLastPathComponent().path
        let r = try Subprocess.run("/bin/bash", ["-c", "source \(script); COMP_WORDS=(signin token --account ''); COMP_CWORD=3; _signin; echo \"${COMPREPLY[*]}\""],
                                   env: box.environment.merging(["PATH": "\(dir):/usr/bin:/bin"]) { $1 })
        #expect(r.stdout == "alice@example.org bob@example.org\n", "\(r.stdout) \(r.stderr)")
    }

    @Test func noToInitsOverwriteQuestionIsACancel() throws {
        let dir = NSTemporaryDirectory() + "signin-init-no-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let config = dir + "/c.json"
        try Data(#"{"client_id": "x", "issuer": "http://127.0.0.1:9"}"#.utf8).write(to: URL(fileURLWithPath: config))
        let t = try Terminal.run([Paths.signin, "init", "-c", config], steps: ["wait:Overwrite", "send:n"], env: ["HOME": dir, "PATH": "/usr/bin:/bin"])
        #expect(t.exit == 4, "\(t)")
        #expect(try String(contentsOfFile: config, encoding: .utf8).contains("http://127.0.0.1:9"), "the file was changed")
    }
}
