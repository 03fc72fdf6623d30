import Foundation
import Testing
@testable import SignInKit
@testable import SignInCLI

/// A command's output through the streams it is given (`IOStreams`), read without a process.
@Suite struct CommandOutputTests {
    /// `signin agent --list --json` with no agent: the error is a JSON object on standard output (as every command's
    /// is with --json), with the exit code it returns, and the message on standard error.
    @Test func agentListWithNoAgentAnswersJSON() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("signin-io-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let env = ["HOME": dir, "XDG_RUNTIME_DIR": dir, "XDG_DATA_HOME": dir + "/data"]
        let command = try AgentCommand(try Arguments.parse(["--list", "--json"], for: AgentCommand.spec), env)
        let (io, captured) = IOStreams.capturing()
        let code = command.run(env, io)
        #expect(code != .success)
        let answer = try #require(JSONValue.object(from: Data(captured.output.utf8)), "no JSON on standard output: \(captured.output)")
        #expect(answer["error"]?.string?.isEmpty == false)
        #expect(answer["exit_code"]?.int == Int(code.rawValue))
        #expect(captured.error.hasPrefix("signin: "))
    }

    /// Help and usage errors go to the streams given, not to the process's own.
    @Test func helpAndUsageErrorsGoToTheStreamsGiven() {
        let (io, captured) = IOStreams.capturing()
        #expect(CLI.main(["whoami", "--help"], io: io) == 0)
        #expect(captured.output.contains("whoami") && captured.error.isEmpty)
        let (io2, captured2) = IOStreams.capturing()
        #expect(CLI.main(["whoami", "--no-such-option", "--json"], io: io2) == ExitCode.usage.rawValue)
        #expect(JSONValue.object(from: Data(captured2.output.utf8))?["exit_code"]?.int == Int(ExitCode.usage.rawValue))
        #expect(captured2.error.contains("--no-such-option"))
    }
}
