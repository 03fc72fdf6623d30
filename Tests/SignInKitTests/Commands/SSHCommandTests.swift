import Testing
@testable import SignInKit
@testable import SignInCLI

/// `signin ssh`'s arguments: signin's own options first, then ssh's, the destination never read as an option.
@Suite struct SSHCommandTests {
    func parse(_ words: [String], _ env: [String: String] = [:]) throws(UsageError) -> any SignInCommand { try parseCommand(words, env) }

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
        // Every --resource is a resource indicator, checked as the command line is read (as token's).
        do {
            _ = try parse(["ssh", "--resource", "https://api.example/", "--resource", "api.example", "host"])
            Issue.record("a second --resource that is no resource indicator was taken")
        } catch {
            #expect(error.message == "--resource \"api.example\" is not a resource indicator (an absolute https URI without a fragment; http only on loopback)")
        }
        let two = try #require(try parse(["ssh", "--resource", "https://a.example/", "--resource", "https://b.example/", "host"]) as? SSHCommand)
        #expect(two.resources == ["https://a.example/", "https://b.example/"])
    }
}
