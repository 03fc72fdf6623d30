import Foundation

/// A program run on a pseudo-terminal with a person's keystrokes (`Tests/Providers/terminal.py`): for what happens
/// only on a terminal (hidden prompts, Ctrl-C, questions).
struct Terminal {
    /// What the program wrote to the terminal (the typed text it echoed included).
    let output: String
    /// Its exit status; nil when a signal ended it or it had to be killed.
    let exit: Int?
    let signaled: Bool
    /// The terminal's echo when the `hidden` step saw the prompt (nil without one), and after the program ended.
    let echoDuring: Bool?
    let echoAfter: Bool?

    /// Runs `argv` under `terminal.py`'s `steps` (`wait:TEXT`, `iwait:TEXT`, `hidden`, `send:TEXT`, `ctrl-c`).
    static func run(_ argv: [String], steps: [String], env: [String: String]? = nil) throws -> Terminal {
        let r = try Subprocess.run(Paths.python, [Paths.providers.appendingPathComponent("terminal.py").path] + steps + ["--"] + argv, env: env)
        guard let o = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any] else {
            throw HarnessError(description: "terminal.py answered no JSON: \(r.stdout) \(r.stderr)")
        }
        return Terminal(output: o["output"] as? String ?? "", exit: o["exit"] as? Int, signaled: o["signaled"] as? Bool ?? false,
                        echoDuring: o["echo_during"] as? Bool, echoAfter: o["echo_after"] as? Bool)
    }
}
