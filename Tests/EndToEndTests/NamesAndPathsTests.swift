import Foundation
import Testing
@testable import SignInKit
@testable import SignInBase
@testable import SignInTransport
@testable import SignInProtocol
@testable import SignInStorage

/// Names that come from the environment or a provider are names, never paths, and never two things at once.
@Suite struct NamesAndPathsTests {
    @Test func profileNamesAreNeverPaths() throws {
        let strict = try Shared.strict.get()
        let box = try strict.signedInSandbox()
        let outside = box.root.appendingPathComponent("x.json").path
        try JSONSerialization.data(withJSONObject: ["client_id": box.clientID, "issuer": strict.issuer]).write(to: URL(fileURLWithPath: outside))
        for (args, env) in [(["whoami"], ["SIGNIN_CONFIG": "", "SIGNIN_PROFILE": "../../x"]), (["whoami", "--profile", "../../x"], ["SIGNIN_CONFIG": ""]),
                            (["init", "--profile", "../../x"], ["SIGNIN_CONFIG": ""]), (["token"], ["SIGNIN_CONFIG": "", "SIGNIN_PROFILE": "-x"])] {
            let r = try box.signin(args, env: env)
            #expect(r.status == 2 && r.stderr.contains("not a configuration name"), "\(args) \(env): \(r.status) \(r.stderr)")
        }
    }

    /// `--account X` where X is one account's e-mail and another's `sub`: ambiguous (exit 2), listing both.
    @Test func anAccountNamedBySubAndByEmailOfAnotherIsAmbiguous() throws {
        let strict = try Shared.strict.get()
        let box = try strict.sandbox()
        #expect(try box.signin("login", env: ["STANDIN_SUB": "alice"]).status == 0)  // e-mail alice@example.org
        #expect(try box.signin("login", env: ["STANDIN_SUB": "alice@example.org"]).status == 0)  // sub alice@example.org
        let r = try box.signin("token", "--account", "alice@example.org")
        #expect(r.status == 2 && r.stderr.contains("names several accounts") && r.stderr.contains("sub alice)") && r.stderr.contains("sub alice@example.org)"), "\(r.stderr)")
        #expect(r.stdout.isEmpty)
    }

    /// `init -c rel/dir/f.json` writes under the working directory, not at `/`; a signed-out account leaves no
    /// lock file of its own while others remain.
    @Test func relativeConfigPathsAndSignedOutAccountsLeaveNothingAstray() throws {
        let strict = try Shared.strict.get()
        let box = try strict.sandbox()
        let rel = "signin-rel-\(UUID().uuidString.prefix(8))/dir/f.json"
        let r = try Subprocess.run("/bin/sh", ["-c", "cd \(box.root.path) && exec \(Paths.signin) init -c \(rel)"],
                                   env: box.environment.filter { !$0.value.isEmpty }, stdin: Data("2\n\(strict.issuer)\nc\n\n\n".utf8))
        #expect(r.status == 0, "\(r.stderr)")
        #expect(FileManager.default.fileExists(atPath: box.root.path + "/" + rel) && !FileManager.default.fileExists(atPath: "/" + rel.split(separator: "/")[0]))
        #expect(try box.signin("login").status == 0)
        #expect(try box.signin("token", "--force-refresh").status == 0)  // takes alice's lock
        #expect(try box.signin("login", env: ["STANDIN_SUB": "bob"]).status == 0)
        let locks = { ((try? FileManager.default.contentsOfDirectory(atPath: box.storeDir)) ?? []).filter { $0.hasSuffix(".cred.lock") } }
        let before = locks()
        #expect(try box.signin("logout", "--account", "alice@example.org").status == 0)
        #expect(locks().count < max(before.count, 1) || before.isEmpty, "alice's lock file went with her: \(before) -> \(locks())")
        #expect(!locks().contains { name in !FileManager.default.fileExists(atPath: box.storeDir + "/" + name.dropLast(5)) }, "no lock without its entry: \(locks())")
    }

    /// A relative `$XDG_DATA_HOME` is ignored (XDG), a relative `$HOME` is taken from the working directory:
    /// nothing is created at `/`.
    @Test func relativeHomeAndXDGVariablesCreateNothingAtTheRoot() throws {
        let strict = try Shared.strict.get()
        let box = try strict.sandbox()
        let marker = "signin-rel-\(UUID().uuidString.prefix(8))"
        let r = try Subprocess.run("/bin/sh", ["-c", "cd \(box.root.path) && exec \(Paths.signin) login"],
                                   env: box.environment.merging(["HOME": marker, "XDG_DATA_HOME": "\(marker)-data", "XDG_CONFIG_HOME": ""]) { $1 }.filter { !$0.value.isEmpty })
        #expect(r.status == 0, "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: "/\(marker)") && !FileManager.default.fileExists(atPath: "/\(marker)-data"))
        #expect(FileManager.default.fileExists(atPath: box.root.path + "/\(marker)/.local/share/signin"), "the store is under the working directory's \(marker)")
        #expect(!FileManager.default.fileExists(atPath: box.root.path + "/\(marker)-data"), "a relative XDG_DATA_HOME is ignored")
    }

    /// `$SIGNIN_PROFILE` is not silently ignored while `$SIGNIN_CONFIG` is set.
    @Test func aProfileIgnoredForSigninConfigIsSaid() throws {
        let strict = try Shared.strict.get()
        let box = try strict.signedInSandbox()
        let r = try box.signin(["whoami"], env: ["SIGNIN_PROFILE": "work"])
        #expect(r.status == 0 && r.stderr.contains("$SIGNIN_PROFILE (work) is ignored: $SIGNIN_CONFIG names the configuration"), "\(r.stderr)")
        #expect(try box.signin("whoami").stderr.isEmpty)
    }
}
