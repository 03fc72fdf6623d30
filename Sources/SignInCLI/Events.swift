import SignInKit

/// What the person sees on standard error while a sign-in runs.
struct Events: Sendable {
    /// Whether an address pasted on standard input is accepted.
    let pasteEnabled: Bool
    /// No browser will be opened here (no display, SSH, or --no-browser): explain the other ways.
    let headless: Bool
    let environment: [String: String]
    /// Where the advice goes.
    var io: IOStreams = .standard
    /// Whether the provider offers the device flow (asked when the advice is written, after discovery).
    var deviceFlowAvailable: @Sendable () -> Bool = { true }
    /// This run's choice of configuration and account, which advice repeats (rendered only when advice is given).
    var invocation: Invocation?
    var loginCommand: String { invocation?.command("login") ?? "signin login" }

    func show(_ e: SignInEvent) {
        switch e {
        case .authorizationURL(let url, _, let port, let browser):
            switch browser {
            case .launched?: io.err("Opening the browser to sign in. If the browser did not open, visit:\n\n  \(url.absoluteString)\n")
            case .unavailable(let reason)?: io.err("Could not open a browser (\(reason)). To sign in, visit:\n\n  \(url.absoluteString)\n")
            case nil: io.err("To sign in, visit:\n\n  \(url.absoluteString)\n")
            }
            Headless.explain(port: port, paste: pasteEnabled, headless: headless, environment: environment, browserLaunched: { if case .launched? = browser { return true } else { return false } }(),
                             device: deviceFlowAvailable() ? loginCommand + " --device" : nil, io)
            io.err("Waiting for the sign-in to finish in the browser (Ctrl-C to cancel)...")
        case .refusedCallback(let reason):
            io.err("Refused a request to the sign-in listener: \(reason). Still waiting.")
        case .refusedConnection(let reason):
            io.err("signin: \(reason).")
        case .refusedPaste(let reason):
            io.err("That address was refused: \(reason). Paste the address the browser ended at, or keep waiting.")
        case .deviceCode(let c):
            io.err("To sign in, visit \(c.verificationURI.absoluteString) on any device and enter the code:\n\n  \(c.userCode)\n")
            if let complete = c.verificationURIComplete { io.err("Or open: \(complete.absoluteString)\n") }
            io.err("Waiting up to \(c.expiresIn.components.seconds / 60) min for the approval (Ctrl-C to cancel)...")
        case .exchangingCode:
            io.err("Received the answer; completing the sign-in...")
        case .notice(let text):
            io.err("signin: \(text)")
        case .browserFailed(let reason, let port):
            io.err("The browser could not be opened (\(reason)). Open the address above in any browser instead.")
            Headless.explain(port: port, paste: pasteEnabled, headless: headless, environment: environment, browserLaunched: false,
                             device: deviceFlowAvailable() ? loginCommand + " --device" : nil, io)
        }
    }
}

/// Advice for sessions where the browser is on another machine.
enum Headless {
    /// `device`: the command that signs in with the device flow, when the provider offers it.
    static func explain(port: Int, paste: Bool, headless: Bool, environment: [String: String], browserLaunched: Bool, device: String?, _ io: IOStreams) {
        guard headless || !browserLaunched else { return }
        var ways: [String] = []
        if paste { ways.append("Open the address above in any browser. When it ends at a page that cannot load (http://127.0.0.1:\(port)/...),\n    copy that page's full address and paste it here, then press Enter.") }
        if let ssh = environment["SSH_CONNECTION"] {
            let fields = ssh.split(separator: " ")
            let host = fields.count >= 3 ? String(fields[2]) : "this-host"
            let user = environment["USER"].map { "\($0)@" } ?? ""
            ways.append("tunnel the port: on the machine with the browser run\n      ssh -L \(port):127.0.0.1:\(port) \(user)\(host)\n    then open the address there (use --port to keep the same port next time).")
        } else {
            ways.append("forward port \(port) from the browser's machine (ssh -L \(port):127.0.0.1:\(port) ...).")
        }
        if let device { ways.append("run `\(device)` to sign in with a code on another device.") }
        // The first way is not an alternative to anything; each after it is.
        let lines = ways.enumerated().map { i, way in "  - " + (i == 0 ? way.prefix(1).uppercased() + way.dropFirst() : "Or " + way) }
        io.err((["No browser on this machine? Any of these works:"] + lines).joined(separator: "\n") + "\n")
    }
}
