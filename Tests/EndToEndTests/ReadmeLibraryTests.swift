import Foundation
import Testing

/// docs/library.md's code is the examples' code, which the package compiles (and `.ci/outside-package` compiles
/// again from that page alone, as an adopting program would).
@Suite struct ReadmeLibraryTests {
    @Test func theLibraryBlocksAreTheExamplesText() throws {
        let readme = try String(contentsOf: Paths.repo.appendingPathComponent("docs/library.md"), encoding: .utf8)
        let tasks = try Subprocess.run("/usr/bin/python3", [Paths.repo.appendingPathComponent("scripts/readme-library-blocks").path])
        #expect(tasks.status == 0, "\(tasks.stderr)")
        #expect(!tasks.stdout.isEmpty && readme.contains(tasks.stdout), "README's Tasks block differs from Examples/tasks: run scripts/readme-library-blocks --write")
        let hello = try String(contentsOf: Paths.repo.appendingPathComponent("Examples/hello/Hello.swift"), encoding: .utf8)
        let code = hello.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.hasPrefix("// ") }.joined(separator: "\n")
        #expect(readme.contains("```swift\n" + code.trimmingCharacters(in: .whitespacesAndNewlines).replacingOccurrences(of: "import SignInKit\n\n", with: "import SignInKit\n\n") + "\n```"), "README's hello block differs from Examples/hello")
    }
}
