import Foundation
import Synchronization
import SignInKit
import SignInTransport
import Testing

/// Where things are: the repository, the built `signin`, the Python with the test providers.
enum Paths {
    static let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let providers = repo.appendingPathComponent("Tests/Providers")

    /// `$SIGNIN_TEST_BINARY` (CI runs the suite under ThreadSanitizer against `scripts/build-release`'s binary), else the `signin`
    /// built beside this test bundle.
    static var signin: String {
        if let p = ProcessInfo.processInfo.environment["SIGNIN_TEST_BINARY"], !p.isEmpty { return p }
        return built("signin")
    }

    /// A product built beside this test bundle (`signin`, `signin-hello`).
    static func built(_ name: String) -> String {
        var dir = Bundle.main.bundleURL.deletingLastPathComponent()
        if Bundle.main.bundleURL.pathExtension != "xctest" { dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent() }
        let candidate = dir.appendingPathComponent(name).path
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        return repo.appendingPathComponent(".build/debug/" + name).path
    }

    /// `$SIGNIN_TEST_PYTHON`, else the venv `.ci/run` creates at `.venv`.
    static var python: String {
        if let p = ProcessInfo.processInfo.environment["SIGNIN_TEST_PYTHON"], !p.isEmpty { return p }
        return repo.appendingPathComponent(".venv/bin/python").path
    }
}

struct HarnessError: Error, CustomStringConvertible {
    let description: String
}
