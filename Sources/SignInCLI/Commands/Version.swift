import SignInKit

#if canImport(Glibc)
import Glibc
#endif

/// `signin version [--json]`.
struct Version: SignInCommand {
    static let spec = CommandSpec(of: Self.self, options: [.json], summary: "Print the version", details: "Prints the version (--json: as JSON).", readsConfiguration: false)

    let json: Bool

    init(_ a: Arguments, _ env: [String: String]) throws(UsageError) {
        json = a.has(.json)
    }

    func run(_ r: CommandRun) throws -> ExitCode {
        let io = r.io
        if json { io.out(JSONText.object(["version": .string(SignInKitVersion.string)])) } else { io.out("signin \(SignInKitVersion.string)") }
        return .success
    }
}
