import Foundation
import Synchronization
import SignInKit
import SignInTransport
import Testing

struct RunResult {
    let status: Int32
    let stdout: String
    let stderr: String
}

/// The HTTP status curl gets for `args` (a URL and its options), as text ("200"); the body is dropped.
func httpStatus(_ args: [String]) throws -> String {
    try Subprocess.run("/usr/bin/curl", ["-sS", "--max-time", "10", "-o", "/dev/null", "-w", "%{http_code}"] + args).stdout
}

enum Subprocess {
    /// Runs a program to completion with output in temporary files (no pipe can fill up and deadlock).
    static func run(_ exe: String, _ args: [String], env: [String: String]? = nil, stdin: Data? = nil) throws -> RunResult {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("signin-run-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let outURL = dir.appendingPathComponent("out"), errURL = dir.appendingPathComponent("err")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: exe)
        p.arguments = args
        if let env { p.environment = env }
        let outH = try FileHandle(forWritingTo: outURL), errH = try FileHandle(forWritingTo: errURL)
        p.standardOutput = outH
        p.standardError = errH
        // Standard input from a file, not a pipe: a program that exits without reading all of it (a fast release
        // build can) must not kill this test process with SIGPIPE.
        var inH: FileHandle?
        if let stdin {
            let inURL = dir.appendingPathComponent("in")
            try stdin.write(to: inURL)
            inH = try FileHandle(forReadingFrom: inURL)
        }
        p.standardInput = inH ?? FileHandle.nullDevice
        try p.run()
        p.waitUntilExit()
        try? inH?.close()
        try? outH.close()
        try? errH.close()
        return RunResult(status: p.terminationStatus, stdout: (try? String(contentsOf: outURL, encoding: .utf8)) ?? "",
                         stderr: (try? String(contentsOf: errURL, encoding: .utf8)) ?? "")
    }
}
