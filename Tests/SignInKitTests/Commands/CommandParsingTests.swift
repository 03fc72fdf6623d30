import Foundation
import Testing
@testable import SignInKit
@testable import SignInBase
@testable import SignInTransport
@testable import SignInProtocol
@testable import SignInStorage
@testable import SignInCLI

/// The command line's own parsing and checks, as unit tests (each command a type that reads its arguments).
///
/// Where a command's own parsing test goes: `Tests/SignInKitTests/Commands/<Command>Tests.swift`, beside this file
/// (`SSHCommandTests`), through `parseCommand`; what every command shares (the splitter, the options declared where
/// they are read, the hand-over rule) is tested here.
@Suite struct CommandParsingTests {
    func parse(_ words: [String], _ env: [String: String] = [:]) throws(UsageError) -> any SignInCommand { try parseCommand(words, env) }

    /// Whether the static half runs `command` to its end: a cached command (the list's mark) that does not hand
    /// itself over (a forced refresh, an interactive sign-in).
    func startsStatic(_ command: any SignInCommand) -> Bool {
        guard Commands.isCached(type(of: command)) else { return false }
        if let c = command as? Token { return c.startsStatic }
        if let c = command as? IDTokenCommand { return c.startsStatic }
        if let c = command as? AWSCredentialProcess { return c.startsStatic }
        if let c = command as? KubectlCredential { return !c.interactive }
        return true
    }

    @Test func aForcedRefreshIsHandedToTheDynamicHalfAtOnceUnlessAnAgentAnswersIt() throws {
        // The static half of the release build cannot load libcurl: a run that will need it starts in the dynamic
        // half rather than reading the configuration and the store twice.
        #expect(try startsStatic(parse(["token"])) && startsStatic(parse(["id-token", "--min-ttl", "600"])))
        #expect(try !startsStatic(parse(["token", "--force-refresh"])) && !startsStatic(parse(["id-token", "--force-refresh"])))
        let agent = ["SIGNIN_AGENT_SOCK": "/run/user/1000/signin/agent.sock"]
        #expect(try startsStatic(parse(["token", "--force-refresh"], agent)))
        #expect(try !startsStatic(parse(["token", "--force-refresh", "--profile", "work"], agent)))
    }

    @Test func theCachedCommandsAreTheOnesTheListMarksAndOnlyThoseStartStatic() throws {
        // One mark in `Commands.entries` decides which commands the static half starts; every other is handed over.
        let cached = Commands.entries.filter(\.cached).map(\.name)
        #expect(cached == ["restore", "whoami", "token", "id-token", "status", "accounts", "use", "kubectl-credential",
                           "aws-credential-process", "google-executable-source", "version", "help", "completion"])
        for name in ["whoami", "status", "accounts", "version"] { #expect(try startsStatic(parse([name])), "\(name)") }
        for words in [["login"], ["logout"], ["metadata-server"], ["agent"], ["lock"], ["dpop-proof", "--method", "GET", "--url", "https://api.example/"]] {
            #expect(try !startsStatic(parse(words)), "\(words)")
        }
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

    /// What an option's value must be is declared with the option, and a command that takes no words says so: both are
    /// checked as the command line is read, before any command's initialiser, each message naming what is wrong.
    @Test func valuesAndWordsAreCheckedAsTheCommandLineIsReadNamingTheMistake() throws {
        func message(_ words: [String]) -> String? {
            do { _ = try parse(words); return nil } catch { return error.message }
        }
        for type in Commands.all where !type.spec.takesArguments {
            #expect(message([type.name, "extra"]) == "`signin \(type.name)` takes no argument \"extra\"", "\(type.name)")
        }
        #expect(try parse(["use", "alice@example.com"]) is Use && parse(["completion", "zsh"]) is CompletionCommand)
        // Asking for help is never refused for a placeholder or a word (README shows `signin login --resource URL`).
        #expect(message(["login", "--resource", "URL", "--help"]) == nil && message(["whoami", "extra", "--help"]) == nil)
        #expect(message(["token", "--resource", "api.example"]) == "--resource \"api.example\" is not a resource indicator (an absolute https URI without a fragment; http only on loopback)")
        #expect(message(["login", "--resource=https://api.example/#f"])?.hasSuffix("is not a resource indicator (an absolute https URI without a fragment; http only on loopback)") == true)
        #expect(message(["whoami", "--resource", "http://api.example/"]) == "--resource \"http://api.example/\" is not an API's URL (an absolute https URI without a fragment; http only on loopback)")
        #expect(message(["token", "--audience="]) == "--audience needs a value (whom the token is for)")
        #expect(message(["id-token", "--audience="]) == "--audience needs a value (the service the token is for)")
        #expect(message(["exec", "--impersonate-service-account", ",", "--", "env"]) == "--impersonate-service-account needs a service account's e-mail")
        #expect(message(["token", "--impersonate-service-account", "a@p.iam.gserviceaccount.com,not-an-email"]) == "--impersonate-service-account: \"not-an-email\" is not a service account's e-mail (NAME@PROJECT.iam.gserviceaccount.com)")
        let token = try #require(try parse(["token", "--impersonate-service-account", "a@p.iam.gserviceaccount.com, b@p.iam.gserviceaccount.com", "--resource", "https://api.example/"]) as? Token)
        #expect(token.chain == ["a@p.iam.gserviceaccount.com", "b@p.iam.gserviceaccount.com"] && token.target.resource == "https://api.example/")
    }

    /// Options are declared as data (`CommandSpec.options`, an option group's `options`): help, the completions and
    /// the parser show that list, and a command's initialiser reads no option it does not declare (a value it could
    /// never be given), whatever it is given and wherever it stops.
    @Test func aCommandTakesTheOptionsItDeclaresAndReadsNoOthers() throws {
        let agent = ["SIGNIN_AGENT_SOCK": "/run/user/1000/signin/agent.sock"]
        for type in Commands.all {
            var lines: [[String]] = [[]]
            for o in type.spec.options where o != .help {
                lines.append(o.value == nil ? [o.long] : [o.long, o.check == nil ? "1" : "https://api.example/"])
            }
            for words in lines {
                for env in [[:], agent] {
                    guard let a = try? Arguments.parse(words, for: type.spec) else { continue }
                    _ = try? type.init(a, env)
                    #expect(a.undeclaredReads.options.isEmpty, "`signin \(type.name) \(words.joined(separator: " "))` reads \(a.undeclaredReads.options.map(\.long)), which it does not declare")
                }
            }
        }
        #expect(Freshness.options == [.minTTL, .forceRefresh])
        #expect(TokenTarget.options == [TokenTarget.resourceOption, TokenTarget.audienceOption])
        #expect(Token.spec.options.map(\.long) == ["--min-ttl", "--force-refresh", "--impersonate-service-account", "--resource", "--audience",
                                                   "--account", "--config", "--profile", "--passphrase-fd", "--json", "--help"])
        // Options read after a check that needs a value (exec's command, ssh's destination, the words of git-credential,
        // aws configure and key move) are declared all the same.
        #expect(Exec.spec.options.map(\.long).contains("--verbose") && SSHCommand.spec.options.map(\.long).contains("--resource"))
        #expect(GitCredential.spec.options.map(\.long).contains("--username") && KeyCommand.spec.options.map(\.long).contains("--to"))
        #expect(AWSCommand.spec.options.map(\.long).starts(with: ["--aws-profile", "--role-arn", "--duration", "--session-name"]))
        // login reads --resource alone: --audience (a token exchange) is refused there, named.
        #expect(throws: UsageError.self) { _ = try parse(["login", "--audience", "x"]) }
        do { _ = try parse(["login", "--audience", "x"]) } catch { #expect(error.message.contains("`signin login` does not take --audience")) }
        let login = try #require(try parse(["login", "--resource", "https://api.example.com/"]) as? Login)
        #expect(login.resource == "https://api.example.com/")
        // The help a command prints lists each option it reads once, in the order read.
        let help = Help.text(for: Exec.spec)
        let order = ["--min-ttl", "--impersonate-service-account", "--resource", "--env", "--id-token", "--token-file", "--gce-metadata"].map { help.range(of: $0)?.lowerBound }
        #expect(order.allSatisfy { $0 != nil } && order.map { $0! } == order.map { $0! }.sorted())
    }
}

/// `words` as `signin` reads them: the command found (`CLI.split`), its arguments parsed against the options it
/// declares, and its initialiser's checks.
func parseCommand(_ words: [String], _ env: [String: String] = [:]) throws(UsageError) -> any SignInCommand {
    guard let (type, rest) = try CLI.split(words) else { throw UsageError("no command") }
    return try type.init(try Arguments.parse(rest, for: type.spec), env)
}
