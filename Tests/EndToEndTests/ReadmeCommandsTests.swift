import Foundation
import Testing

/// Every `signin ...` command README and its pages in docs/ show is one this signin takes as printed: its command,
/// options and arguments parse (the command's `--help` then answers), offline.
@Suite struct ReadmeCommandsTests {
    /// README and every page of docs/, as one text.
    static func documentation() throws -> String {
        let docs = Paths.repo.appendingPathComponent("docs")
        let pages = try FileManager.default.contentsOfDirectory(atPath: docs.path).filter { $0.hasSuffix(".md") }.sorted()
        return try ([Paths.repo.appendingPathComponent("README.md")] + pages.map { docs.appendingPathComponent($0) })
            .map { try String(contentsOf: $0, encoding: .utf8) }.joined(separator: "\n")
    }

    static func commands() throws -> [[String]] {
        let readme = try documentation()
        var texts: [String] = []
        // Inline code spans, and lines of sh blocks, that start with `signin `.
        var rest = Substring(readme)
        while let open = rest.firstIndex(of: "`") {
            let after = rest[rest.index(after: open)...]
            guard let close = after.firstIndex(of: "`") else { break }
            let span = String(after[..<close])
            if span.hasPrefix("signin ") && !span.contains("\n") { texts.append(span) }
            rest = after[after.index(after: close)...]
        }
        var inShell = false
        for line in readme.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") { inShell = line == "```sh"; continue }
            if inShell, line.hasPrefix("signin ") { texts.append(String(line.split(separator: "#", maxSplits: 1)[0])) }
        }
        var out: [[String]] = []
        for text in Set(texts) where !text.contains("...") && !text.contains("__complete") && !text.contains("\\(") {
            var words: [String] = []
            var skipNext = false
            for raw in text.replacingOccurrences(of: "\\|", with: "|").split(separator: " ").dropFirst() {
                if raw == "--" { break }
                var w = String(raw).replacingOccurrences(of: "[", with: "").replacingOccurrences(of: "]", with: "")
                if skipNext { skipNext = false; continue }
                if w == "|" { skipNext = true; continue }
                if let bar = w.firstIndex(of: "|") { w = String(w[..<bar]) }
                if !w.isEmpty { words.append(w) }
            }
            out.append(words)
        }
        return out.sorted { $0.joined(separator: " ") < $1.joined(separator: " ") }
    }

    @Test func everyCommandReadmeShowsParsesAsPrinted() throws {
        let commands = try Self.commands()
        #expect(commands.count > 30, "README's commands were found: \(commands.count)")
        let dir = NSTemporaryDirectory() + "signin-readme-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for words in commands {
            let args = words == ["--version"] ? words : words + ["--help"]
            let r = try Subprocess.run(Paths.signin, args, env: ["HOME": dir, "PATH": "/usr/bin:/bin"])
            #expect(r.status == 0 && !r.stdout.isEmpty, "README shows `signin \(words.joined(separator: " "))`: \(r.status) \(r.stderr)")
        }
    }
}
