import Foundation
import Testing
@testable import SignInKit
@testable import SignInBase
@testable import SignInTransport
@testable import SignInProtocol
@testable import SignInStorage
@testable import SignInCLI

@Suite struct ConfigurationTests {
    func parse(_ json: String) throws(SignInError) -> SignInConfiguration {
        try SignInConfiguration.parse(Data(json.utf8), sourcePath: "/etc/test.json")
    }

    func error(_ json: String) -> (field: String?, reason: String)? {
        do {
            _ = try parse(json)
            return nil
        } catch {
            guard case .configInvalid(let file, let field, let reason) = error, file == "/etc/test.json" else { return (nil, "wrong error \(error)") }
            return (field, reason)
        }
    }

    /// Issue 41, item 5: a misspelt key is named with the one it is close to, as commands and options are.
    @Test func aMisspeltKeySaysWhatItMayMean() {
        do {
            _ = try SignInConfiguration.parse(Data(#"{"client_id": "c", "redirect_prot": 8080}"#.utf8), sourcePath: "c.json")
            Issue.record("accepted")
        } catch {
            #expect(error.description.contains("redirect_prot") && error.description.contains("did you mean \"redirect_port\""), "\(error)")
        }
    }

    @Test func defaultsAreGoogle() throws {
        let c = try parse(#"{"client_id": "123.apps.googleusercontent.com"}"#)
        #expect(c.issuer == "https://accounts.google.com")
        #expect(c.isGoogle)
        #expect(c.scopes == ["openid", "email", "profile"])
        #expect(c.redirectPort == 0)
    }

    /// The example is valid in every field, but its placeholder client ID is refused with the console step.
    @Test func exampleConfigParsesOnceItsClientIDIsReal() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("config.example.json")
        do {
            _ = try SignInConfiguration.load(path: url.path)
            Issue.record("the placeholder client ID was accepted")
        } catch {
            guard case .configInvalid(_, "client_id", let reason) = error else { Issue.record("\(error)"); return }
            #expect(reason.contains("console.cloud.google.com"))
        }
        let text = try String(contentsOf: url, encoding: .utf8).replacing("1234567890-abcdefghijklmnopqrstuvwxyz012345", with: "42-mine")
        let c = try parse(text)
        #expect(c.isGoogle)
        #expect(c.clientSecret != nil)
    }

    @Test func invalidJSONSaysWhereAndTypesAreNotCoerced() {
        #expect(message("{\"client_id\": \"c\",\n  \"scopes\": [\"openid\" \"email\"]\n}")?.contains("line 2, column 23") == true)
        #expect(message(#"{"client_id": "c" "issuer": "x"}"#)?.contains("line 1, column 19") == true)
        #expect(message("{\n\"client_id\": \"c,\n\"issuer\": \"x\"}")?.contains("line 2, column 17") == true)
        // What only the strict grammar refuses is located too, not called "not a JSON object".
        #expect(message("{\"client_id\": \"c\",\n \"redirect_port\": 08}")?.contains("line 2, column 20: a malformed number") == true)
        #expect(message(#"{"client_id": "c\x"}"#)?.contains("line 1, column 17: an unknown escape") == true)
        #expect(message(#"{"client_id": "c", "redirect_port": "8765"}"#)?.contains("redirect_port") == true)
        #expect(message(#"{"client_id": "c", "http_timeout": "30"}"#)?.contains("http_timeout") == true)
        #expect(message(#"["client_id"]"#)?.contains("not a JSON object") == true)
    }

    func message(_ json: String) -> String? {
        do {
            _ = try parse(json)
            return nil
        } catch {
            return error.description
        }
    }

    /// A field given twice is an error naming it and its line, not "the first one counts".
    @Test func aFieldGivenTwiceIsRefusedWithItsLine() {
        let e = error("{\"client_id\": \"a\",\n \"issuer\": \"https://a.example\",\n \"issuer\": \"https://b.example\"}")
        #expect(e?.reason.contains("\"issuer\" appears twice") == true && e?.reason.contains("line 3") == true, "\(String(describing: e))")
    }

    @Test func errorsNameTheField() {
        #expect(error(#"{}"#)?.field == "client_id")
        #expect(error(#"{"client_id": "x", "colour": 1}"#)?.field == "colour")
        #expect(error(#"{"client_id": 5}"#)?.field == "client_id")
        #expect(error(#"{"client_id": "x", "redirect_port": 70000}"#)?.field == "redirect_port")
        #expect(error(#"{"client_id": "x", "redirect_port": 1.5}"#)?.field == "redirect_port")
        #expect(error(#"{"client_id": "x", "scopes": [1]}"#)?.field == "scopes")
        #expect(error(#"{"client_id": "x", "issuer": "ftp://x"}"#)?.field == "issuer")
        #expect(error(#"{"client_id": "x", "redirect_path": "cb"}"#)?.field == "redirect_path")
        #expect(error(#"{"client_id": "x", "extra_authorization_parameters": {"state": "x"}}"#)?.field == "extra_authorization_parameters")
        #expect(error(#"{"client_id": "x", "ca_file": "relative.pem"}"#)?.field == "ca_file")
        #expect(error(#"{"client_id": "x", "ca_file": "/nonexistent/ca.pem"}"#)?.field == "ca_file")
        #expect(error(#"{"client_id": "x", "http_timeout": 0}"#)?.field == "http_timeout")
        #expect(error("[1,2]") != nil)
        #expect(error("") != nil)
        #expect(error("\u{ff}\u{fe}") != nil)
    }

    @Test func pathResolution() {
        #expect(SignInConfiguration.defaultPath(explicit: "/a", environment: ["SIGNIN_CONFIG": "/b"]) == "/a")
        #expect(SignInConfiguration.defaultPath(explicit: nil, environment: ["SIGNIN_CONFIG": "/b"]) == "/b")
        #expect(SignInConfiguration.defaultPath(explicit: nil, environment: ["XDG_CONFIG_HOME": "/x", "HOME": "/h"]) == "/x/signin/config.json")
        #expect(SignInConfiguration.defaultPath(explicit: nil, environment: ["HOME": "/h"]) == "/h/.config/signin/config.json")
    }

    @Test func googleAuthorizationRequestAsksForOfflineAccess() throws {
        var c = try parse(#"{"client_id": "cid", "login_hint": "a@b.c", "hosted_domain": "b.c"}"#)
        c.extraAuthorizationParameters = ["prompt": "consent"]
        let e = ProviderEndpoints(issuer: c.issuer, authorization: "https://accounts.google.com/o/oauth2/v2/auth", token: "https://t", jwks: "https://j")
        let r = try AuthorizationRequest(config: c, endpoints: e, redirectURI: "http://127.0.0.1:1234/callback", scopes: c.scopes, loginHint: nil)
        for part in ["access_type=offline", "include_granted_scopes=true", "code_challenge_method=S256", "login_hint=a%40b.c", "hd=b.c",
                     "prompt=consent", "redirect_uri=http%3A%2F%2F127.0.0.1%3A1234%2Fcallback"] {
            #expect(r.url.contains(part), "\(part)")
        }
        #expect(r.state.count >= 22 && r.nonce.count >= 22)  // >= 128 bits
        let other = try AuthorizationRequest(config: c, endpoints: e, redirectURI: "x", scopes: c.scopes, loginHint: nil)
        #expect(other.state != r.state && other.nonce != r.nonce)
    }
}

/// The command line's own parsing and checks, as unit tests (each command a type that reads its arguments).
@Suite struct CommandParsingTests {
    func parse(_ words: [String], _ env: [String: String] = [:]) throws(UsageError) -> any SignInCommand {
        guard let (type, rest) = try CLI.split(words) else { throw UsageError("no command") }
        return try type.init(try Arguments.parse(rest, for: type.spec), env)
    }

    @Test func aForcedRefreshIsHandedToTheDynamicHalfAtOnceUnlessAnAgentAnswersIt() throws {
        // The static half of the release build cannot load libcurl: a run that will need it starts in the dynamic
        // half rather than reading the configuration and the store twice.
        #expect(try parse(["token"]).startsStatic && parse(["id-token", "--min-ttl", "600"]).startsStatic)
        #expect(try !parse(["token", "--force-refresh"]).startsStatic && !parse(["id-token", "--force-refresh"]).startsStatic)
        let agent = ["SIGNIN_AGENT_SOCK": "/run/user/1000/signin/agent.sock"]
        #expect(try parse(["token", "--force-refresh"], agent).startsStatic)
        #expect(try !parse(["token", "--force-refresh", "--profile", "work"], agent).startsStatic)
    }

    @Test func theCachedCommandsAreTheOnesTheListMarksAndOnlyThoseStartStatic() throws {
        // One mark in `Commands.entries` decides which commands the static half starts; every other is handed over.
        let cached = Commands.entries.filter(\.cached).map(\.name)
        #expect(cached == ["restore", "whoami", "token", "id-token", "status", "accounts", "use", "kubectl-credential",
                           "aws-credential-process", "google-executable-source", "version", "help", "completion"])
        for name in ["whoami", "status", "accounts", "version"] { #expect(try parse([name]).startsStatic, "\(name)") }
        for words in [["login"], ["logout"], ["metadata-server"], ["agent"], ["lock"], ["dpop-proof", "--method", "GET", "--url", "https://api.example/"]] {
            #expect(try !parse(words).startsStatic, "\(words)")
        }
    }

    @Test func sshTakesItsOwnOptionsThenSsh() throws {
        let plain = try #require(try parse(["ssh", "--account", "a@example.org", "--account", "b@example.org", "--for", "2h", "-p", "2222", "-i", "key", "me@vm", "git", "pull"]) as? SSHCommand)
        #expect(plain.accounts == ["a@example.org", "b@example.org"] && plain.seconds == 7200)
        #expect(plain.sshArguments == ["-p", "2222", "-i", "key", "me@vm", "git", "pull"] && plain.destinationIndex == 4)
        let dashed = try #require(try parse(["ssh", "-tt", "-oBatchMode=yes", "--", "host"]) as? SSHCommand)
        #expect(dashed.sshArguments[dashed.destinationIndex] == "host")
        // Fourth review, part 8: after signin's `--` the next word is the destination, never an ssh option.
        let separated = try #require(try parse(["ssh", "--account", "a@example.org", "--", "vm", "uptime"]) as? SSHCommand)
        #expect(separated.sshArguments[separated.destinationIndex] == "vm")
        #expect(throws: UsageError.self) { _ = try parse(["ssh", "--", "-oProxyCommand=touch /tmp/owned", "uptime"]) }
        #expect(SSHCommand.seconds("90") == 90 && SSHCommand.seconds("10m") == 600 && SSHCommand.seconds("1d") == 86400 && SSHCommand.seconds("x") == nil)
        #expect(throws: UsageError.self) { _ = try parse(["ssh", "--for", "soon", "host"]) }
        #expect(throws: UsageError.self) { _ = try parse(["ssh", "-p", "22"]) }
    }

    @Test func everyCommandIsListedUnderItsOwnName() {
        for type in Commands.all { #expect(type.spec.name == type.name) }
        #expect(Set(Commands.all.map { $0.name }).count == Commands.all.count)
        // The list names each command once, and a name finds its command.
        for e in Commands.entries { #expect(Commands.named(e.name).map(ObjectIdentifier.init) == ObjectIdentifier(e.type)) }
        #expect(Token.name == "token" && DockerCredential.name == "docker-credential" && Commands.named("tokens") == nil)
    }

    @Test func argumentsBecomeTypedFieldsAndMistakesAreRefusedBeforeAnythingRuns() throws {
        let token = try #require(try parse(["--min-ttl", "5", "token", "--force-refresh"]) as? Token)
        #expect(token.freshness.minTTL == 5 && token.freshness.forceRefresh)
        let exec = try #require(try parse(["exec", "--env", "X_TOKEN", "--id-token", "--", "env"]) as? Exec)
        #expect(exec.variable == "X_TOKEN" && exec.kind == .id && exec.command == ["env"])
        for bad in [["token", "--min-ttl", "abc"], ["login", "--device", "--no-browser"], ["logout", "--all", "--account", "a"],
                    ["use"], ["git-credential", "fetch"], ["key", "move", "--to", "auto"], ["exec", "--env", "1X", "--", "env"],
                    ["exec"], ["completion", "tcsh"], ["whoami", "extra"], ["tokn"]] {
            #expect(throws: UsageError.self, "\(bad)") { _ = try parse(bad) }
        }
    }
}
