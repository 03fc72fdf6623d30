import Foundation
import Testing

/// Completion in real bash, zsh and fish: what a provider, a file name or the store chose is offered as a literal
/// word, never evaluated, whatever it holds.
@Suite struct CompletionTests {
    /// Each is a valid e-mail local part or `sub` a provider may hand out; each runs `touch` if a shell evaluates it.
    static let hostile = ["m`touch${IFS}pwned1`", "m$(touch${IFS}pwned2)", "${HOME:?}$(touch pwned3)x", "q'\"a b*?[x]", "-x;touch pwned4"]

    func sandboxWithHostileAccounts() throws -> (Sandbox, String, String) {
        let strict = try Shared.strict.get()
        let box = try strict.sandbox()
        for sub in Self.hostile {
            let r = try box.signin("login", env: ["STANDIN_SUB": sub])
            try #require(r.status == 0, "\(sub): \(r.stderr)")
        }
        let sentinel = box.root.appendingPathComponent("cwd").path
        try FileManager.default.createDirectory(atPath: sentinel, withIntermediateDirectories: true)
        let dir = URL(fileURLWithPath: Paths.signin).deletingLastPathComponent().path
        box.environment["PATH"] = "\(dir):/usr/bin:/bin"
        return (box, sentinel, dir)
    }

    func script(_ box: Sandbox, _ shell: String) throws -> String {
        let path = box.root.appendingPathComponent("completion.\(shell)").path
        try (try box.signin("completion", shell).stdout).write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func pwned(_ sentinel: String) -> [String] { ((try? FileManager.default.contentsOfDirectory(atPath: sentinel)) ?? []).filter { $0.hasPrefix("pwned") } }

    var emails: [String] { Self.hostile.map { $0 + "@example.org" } }

    /// `key move --to <TAB>` offers the key storages, in bash and fish.
    @Test func keyMoveToCompletesTheStorages() throws {
        let strict = try Shared.strict.get()
        let box = try strict.sandbox()
        let bash = try script(box, "bash")
        let r = try Subprocess.run("/bin/bash", ["-c", "source \(bash); COMP_WORDS=(signin key move --to 'tp'); COMP_CWORD=4; _signin; printf '%s\\n' \"${COMPREPLY[@]}\""], env: box.environment)
        #expect(Set(r.stdout.split(separator: "\n").map(String.init)) == ["tpm", "tpm+passphrase"], "\(r.stdout) \(r.stderr)")
        let fish = try box.signin("completion", "fish").stdout
        #expect(fish.contains("-l to -x -a 'secret-service passphrase file tpm tpm+passphrase'"), "\(fish)")
    }

    @Test func bashOffersHostileAccountsAsLiteralQuotedWords() throws {
        let (box, sentinel, _) = try sandboxWithHostileAccounts()
        let s = try script(box, "bash")
        // What bash would insert, read back by the shell itself: each word is the e-mail, exactly.
        let r = try Subprocess.run("/bin/bash", ["-c", """
            cd \(sentinel) && source \(s)
            COMP_WORDS=(signin token --account ''); COMP_CWORD=3; _signin
            for w in "${COMPREPLY[@]}"; do eval "set -- $w"; printf 'A:%s\\n' "$1"; done
            COMP_WORDS=(signin use ''); COMP_CWORD=2; _signin
            for w in "${COMPREPLY[@]}"; do eval "set -- $w"; printf 'U:%s\\n' "$1"; done
            COMP_WORDS=(signin token --account 'm'); COMP_CWORD=3; _signin; echo "M:${#COMPREPLY[@]}"
            """], env: box.environment)
        #expect(pwned(sentinel).isEmpty, "bash ran a provider's text: \(pwned(sentinel)) \(r.stderr)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(Set(lines.filter { $0.hasPrefix("A:") }.map { String($0.dropFirst(2)) }) == Set(emails), "\(r.stdout) \(r.stderr)")
        #expect(Set(lines.filter { $0.hasPrefix("U:") }.map { String($0.dropFirst(2)) }) == Set(emails), "\(r.stdout)")
        #expect(lines.contains("M:2"), "the prefix selects literally: \(r.stdout)")
    }

    @Test func zshOffersHostileAccountsWithoutEvaluatingThem() throws {
        let (box, sentinel, _) = try sandboxWithHostileAccounts()
        let s = try script(box, "zsh")
        var env = box.environment
        env["ZDOTDIR"] = box.root.path
        let r = try Subprocess.run("/usr/bin/zsh", ["-f", "-c", """
            cd \(sentinel); autoload -U compinit; compinit -u -d \(box.root.path)/.zcompdump; source \(s)
            emulate sh -c 'COMP_WORDS=(signin token --account ""); COMP_CWORD=3; _signin; for w in "${COMPREPLY[@]}"; do printf "A:%s\\n" "$w"; done'
            """], env: env)
        #expect(pwned(sentinel).isEmpty, "zsh ran a provider's text: \(pwned(sentinel)) \(r.stderr)")
        // zsh's bashcompinit removes one level of quoting (${(Q)...}) before it inserts a match, quoting it itself.
        let unquoted = try Subprocess.run("/usr/bin/zsh", ["-f", "-c", "for w in \"$@\"; do print -r -- \"U:${(Q)w}\"; done", "zsh"] +
                                          r.stdout.split(separator: "\n").map { String($0.dropFirst(2)) }, env: env)
        #expect(Set(unquoted.stdout.split(separator: "\n").map { String($0.dropFirst(2)) }) == Set(emails), "\(r.stdout) \(r.stderr)")
        #expect(pwned(sentinel).isEmpty)
    }

    @Test func fishLoadsCleanlyAndOffersHostileAccountsAndProfilesLiterally() throws {
        let (box, sentinel, _) = try sandboxWithHostileAccounts()
        // Configuration files whose names are not configuration names are never offered (nor evaluated).
        let configDir = box.environment["XDG_CONFIG_HOME"]! + "/signin"
        try FileManager.default.createDirectory(atPath: configDir, withIntermediateDirectories: true)
        for name in ["corp", "p$(touch pwned5)", "a b", "-x"] {
            try Data("{}".utf8).write(to: URL(fileURLWithPath: configDir + "/\(name).json"))
        }
        // A file where fish completes: never offered as an account.
        _ = FileManager.default.createFile(atPath: sentinel + "/notes-file.txt", contents: Data())
        let s = try script(box, "fish")
        let r = try Subprocess.run("/usr/bin/fish", ["-N", "-c", "cd \(sentinel); source \(s); complete -C 'signin token --account '; complete -C 'signin use '; echo ---; complete -C 'signin whoami --profile '"],
                                   env: box.environment.merging(["HOME": box.root.path]) { $1 })
        #expect(r.stderr.isEmpty, "fish printed: \(r.stderr)")
        #expect(pwned(sentinel).isEmpty, "fish ran a provider's text: \(pwned(sentinel))")
        let parts = r.stdout.components(separatedBy: "---\n")
        func words(_ text: String) -> [String] { text.split(separator: "\n").map { String($0.split(separator: "\t", maxSplits: 1).first ?? "") } }
        for email in emails { #expect(words(parts[0]).filter { $0 == email }.count == 2, "\(email) in \(r.stdout)") }
        #expect(!parts[0].contains("notes-file.txt"), "fish offered a file after --account: \(parts[0])")
        #expect(parts.count == 2 && words(parts[1]) == ["corp"], "\(r.stdout)")
    }

    /// bash and zsh complete the same way for `--profile`: only real configuration names.
    @Test func bashProfilesAreOnlyConfigurationNames() throws {
        let (box, sentinel, _) = try sandboxWithHostileAccounts()
        let configDir = box.environment["XDG_CONFIG_HOME"]! + "/signin"
        try FileManager.default.createDirectory(atPath: configDir, withIntermediateDirectories: true)
        for name in ["corp", "p$(touch pwned6)", "p`touch pwned7`"] { try Data("{}".utf8).write(to: URL(fileURLWithPath: configDir + "/\(name).json")) }
        let s = try script(box, "bash")
        let r = try Subprocess.run("/bin/bash", ["-c", "cd \(sentinel) && source \(s); COMP_WORDS=(signin whoami --profile ''); COMP_CWORD=3; _signin; printf '%s\\n' \"${COMPREPLY[@]}\""], env: box.environment)
        #expect(r.stdout == "corp\n", "\(r.stdout) \(r.stderr)")
        #expect(pwned(sentinel).isEmpty)
    }
}
