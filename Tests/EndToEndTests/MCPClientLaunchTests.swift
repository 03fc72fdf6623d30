import Foundation
import Testing

/// `signin mcp URL` as MCP clients really start and end it: with only `HOME LOGNAME PATH SHELL TERM USER` (the MCP
/// SDKs' default environment), on a desktop session whose runtime folder, bus, keyring and portal the environment
/// does not name; and ended by closing standard input, then SIGTERM 2 s later, then SIGKILL 2 s after that.
@Suite struct MCPClientLaunchTests {
    /// The MCP SDKs' default environment for `box`'s user: nothing of the session, no browser, no store location.
    static func stripped(_ box: Sandbox) -> [String: String] {
        let inherited = ProcessInfo.processInfo.environment
        return ["HOME": box.root.path, "LOGNAME": inherited["LOGNAME"] ?? "root", "PATH": inherited["PATH"] ?? "/usr/bin:/bin",
                "SHELL": "/bin/bash", "TERM": "xterm", "USER": inherited["USER"] ?? "root"]
    }

    /// A private `/run/user` (an empty tmpfs in a mount namespace of its own), so that no desktop session of the
    /// machine's is found, and the test's own session is the only one.
    static let ownRunUser = ["/usr/bin/unshare", "--mount", "--propagation", "private", "/bin/sh", "-c", "mount -t tmpfs -o mode=755 tmpfs /run/user && exec \"$@\"", "sh"]

    static var namespacesRefused: String? {
        let probe = try? Subprocess.run(ownRunUser[0], Array(ownRunUser.dropFirst()) + ["/bin/true"])
        return probe?.status == 0 ? nil : "a mount namespace is refused here (unshare --mount needs root): \(probe?.stderr ?? "")"
    }

    static func requests(_ p: Provider) -> [[String: Any]] { ((try? MCPServerTests.stats(p)["mcp_requests"]) as? [[String: Any]]) ?? [] }

    /// A call the server answers in 25 s is pending when the client closes standard input: the bridge ends the
    /// session (DELETE reaches the server) and exits by itself within the client's 2 s grace, never needing SIGTERM.
    @Test func theBridgeEndsWithinTheClientsGraceWithACallPending() throws {
        let p = try Provider(script: "mcp_server.py")
        defer { p.stop() }
        let url = try #require(p.readyWords.first)
        let box = try MCPServerTests.machine(p)
        #expect(try box.signin("login", "--resource", url, "--timeout", "30").status == 0)
        for signal: Int32? in [nil, SIGTERM] {
            let deletes = Self.requests(p).filter { $0["method"] as? String == "DELETE" }.count
            let bridge = try LiveBridge(box, ["mcp", url])
            #expect(bridge.start()?["result"] != nil)
            bridge.send(MCPBridgeTests.call("1", "slow", #"{"ms":25000}"#))
            #expect(waitFor { Self.requests(p).filter { $0["method"] as? String == "POST" }.count >= 3 * (signal == nil ? 1 : 2) }, "the call reached the server")
            let ending = bridge.endAsAClientDoes(signal: signal)
            #expect(ending == .onItsOwn(0), "\(signal.map { "after signal \($0)" } ?? "after standard input closed"): \(ending) \(bridge.stderr)")
            #expect(Self.requests(p).filter { $0["method"] as? String == "DELETE" }.count == deletes + 1, "the session was ended")
        }
    }

    /// A sign-in waiting in a browser the person never finishes: the client goes, the bridge exits by itself within
    /// the grace (the sign-in given up), and the next bridge opens its own browser at once and signs in.
    @Test func aSignInWaitingInTheBrowserIsGivenUpWhenTheClientGoes() throws {
        let p = try Provider(script: "mcp_server.py")
        defer { p.stop() }
        let url = try #require(p.readyWords.first)
        let box = try MCPServerTests.machine(p)
        let bridge = try LiveBridge(box, ["mcp", url, "--timeout", "60"], env: ["STANDIN_MODE": "none"])
        bridge.send(#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#)
        #expect(waitFor { MCPBridgeTests.browserLaunches(box) == 1 }, "the browser opened: \(bridge.stderr)")
        let ending = bridge.endAsAClientDoes()
        #expect(ending == .onItsOwn(0), "\(ending) \(bridge.stderr)")
        let next = try LiveBridge(box, ["mcp", url, "--timeout", "60"])
        #expect(next.start()?["result"] != nil, "the next bridge signed in: \(next.stderr)")
        #expect(MCPBridgeTests.browserLaunches(box) == 2)
        #expect(next.finish() == 0)
    }

    /// A client that cancels its initialize while the first sign-in waits in the browser (a client's own timeout), then
    /// sends a new one: no second browser; when the person finishes the page the first browser showed, the new
    /// initialize is answered, and the cancelled one never is.
    @Test func cancellingTheInitializeThatWaitsOnASignInOpensNoSecondBrowser() throws {
        let p = try Provider(script: "mcp_server.py")
        defer { p.stop() }
        let url = try #require(p.readyWords.first)
        let box = try MCPServerTests.machine(p)
        let bridge = try LiveBridge(box, ["mcp", url, "--timeout", "60"], env: ["STANDIN_MODE": "none"])
        func initialize(_ id: Int) -> String {
            #"{"jsonrpc":"2.0","id":\#(id),"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#
        }
        bridge.send(initialize(0))
        #expect(waitFor { MCPBridgeTests.browserLaunches(box) == 1 }, "the browser opened: \(bridge.stderr)")
        bridge.send(#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":0,"reason":"timed out"}}"#)
        bridge.send(initialize(1))
        // The person finishes the page the first browser showed.
        let page = try #require(box.standinSteps().first { $0["step"] as? String == "fds" }?["url"] as? String)
        let visit = try Subprocess.run("/usr/bin/curl", ["-sS", "-L", "-o", "/dev/null", "-w", "%{http_code}", page])
        #expect(visit.stdout == "200", "\(visit.stdout) \(visit.stderr)")
        #expect(bridge.answer(1)?["result"] != nil, "the new initialize is answered: \(bridge.stderr)")
        #expect(MCPBridgeTests.browserLaunches(box) == 1, "no second browser")
        bridge.send(MCPBridgeTests.call("2", "add", #"{"a":2,"b":3}"#))
        var seen: [[String: Any]] = []
        while let m = bridge.next() {
            seen.append(m)
            if m["id"] as? Int == 2 { break }
        }
        #expect(!seen.contains { $0["id"] as? Int == 0 }, "no answer for the cancelled initialize: \(seen)")
        #expect(bridge.finish() == 0)
    }

    /// Started with the SDKs' default environment where no desktop session runs (no runtime folder, no bus, no
    /// display, no `$BROWSER`): the request that needs a sign-in is answered at once with an error naming the command
    /// to run in a terminal, not a wait for a page nobody can see; nothing is stored.
    @Test func whereNoPageCanOpenTheClientIsToldWhatToRun() throws {
        if let reason = Self.namespacesRefused { Issue.record("not run, so failed: \(reason)"); return }
        let p = try Provider(script: "mcp_server.py")
        defer { p.stop() }
        let url = try #require(p.readyWords.first)
        let box = try MCPServerTests.machine(p)
        let bridge = try LiveBridge(box, ["mcp", url, "--timeout", "60"], environment: Self.stripped(box), through: Self.ownRunUser)
        let answer = bridge.start()
        let message = (answer?["error"] as? [String: Any])?["message"] as? String ?? ""
        #expect(message.contains("signin login --resource \(url)") && message.contains("No browser"), "\(answer ?? [:]) \(bridge.stderr)")
        #expect(MCPBridgeTests.browserLaunches(box) == 0)
        #expect(bridge.endAsAClientDoes() != .killed)
    }

    /// Where no page can open but the MCP client declared URL-mode elicitation (MCP 2025-11-25), the sign-in page is
    /// offered through the client itself: the client opens it (here, with the browser stand-in), the sign-in
    /// completes, and the call goes through.
    @Test func whereNoPageCanOpenAClientTakingURLElicitationIsOfferedThePage() throws {
        if let reason = Self.namespacesRefused { Issue.record("not run, so failed: \(reason)"); return }
        let p = try Provider(script: "mcp_server.py")
        defer { p.stop() }
        let url = try #require(p.readyWords.first)
        let box = try MCPServerTests.machine(p)
        // The client's own environment has the browser stand-in; signin gets the SDK's default environment alone, in a
        // namespace with no desktop session.
        var env = box.environment
        env["MCP_CLIENT_DEFAULT_ENV"] = "1"
        env["ELICIT_BROWSER"] = Paths.providers.appendingPathComponent("browser_standin.py").path
        env["HOME"] = box.root.path
        let r = try Subprocess.run(Self.ownRunUser[0], Array(Self.ownRunUser.dropFirst()) + [Paths.python, Paths.providers.appendingPathComponent("mcp_stdio_client.py").path,
                                   "elicit", Paths.signin, "mcp", url, "--timeout", "60"], env: env.filter { !$0.value.isEmpty })
        let answer = TokensForEveryAPITests.json(r.stdout.split(separator: "\n").last.map(String.init) ?? "")
        #expect(r.status == 0 && answer["sum"] as? String == "5", "\(r.stdout) \(r.stderr)")
        #expect((answer["offered"] as? [String])?.first?.contains("/authorize?") == true, "the page was offered: \(answer)")
        #expect(MCPBridgeTests.browserLaunches(box) == 1, "opened once, by the client")
    }

    /// On a desktop session the environment does not name (its runtime folder `/run/user/UID`, the session bus
    /// there, gnome-keyring on it, the desktop portal), the MCP SDK's stdio client starts `signin mcp URL` with its
    /// default environment: the page opens through the portal, the first sign-in completes, and the store key goes
    /// to the Secret Service (no key file); the next run restores with no browser.
    @Test func onADesktopTheFirstSignInOpensThroughThePortalAndKeepsTheKeyInTheKeyring() throws {
        if let reason = Self.namespacesRefused ?? KeyStorageTests.available { Issue.record("not run, so failed: \(reason)"); return }
        let p = try Provider(script: "mcp_server.py")
        defer { p.stop() }
        let url = try #require(p.readyWords.first)
        let box = try MCPServerTests.machine(p)
        let portalLog = box.root.appendingPathComponent("portal.log").path
        let client = [Paths.python, Paths.providers.appendingPathComponent("mcp_stdio_client.py").path, "basic", Paths.signin, "mcp", url]
            .map { "'\($0)'" }.joined(separator: " ")
        let script = """
            set -u
            run=/run/user/$(id -u); mkdir -m 700 "$run"
            dbus-daemon --session --address="unix:path=$run/bus" --fork --print-pid > "$HOME/dbus.pid"
            # However it ends: the kernel's copy of the store key goes, then the session's daemons.
            trap '"\(Paths.signin)" lock >/dev/null 2>&1; kill $(cat "$HOME/dbus.pid") $portal 2>/dev/null' EXIT
            export DBUS_SESSION_BUS_ADDRESS="unix:path=$run/bus"
            echo -n keyring-pw | gnome-keyring-daemon --unlock --components=secrets >/dev/null
            PORTAL_LOG='\(portalLog)' PORTAL_BROWSER='\(Paths.providers.appendingPathComponent("browser_standin.py").path)' '\(Paths.python)' '\(Paths.providers.appendingPathComponent("desktop_portal.py").path)' > "$HOME/portal.out" &
            portal=$!
            for name in org.freedesktop.secrets org.freedesktop.portal.Desktop; do
              for i in $(seq 400); do dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus.NameHasOwner string:$name 2>/dev/null | grep -q 'boolean true' && break; sleep 0.05; done
            done
            MCP_CLIENT_DEFAULT_ENV=1 \(client); echo "@first=$?"
            test -e "$HOME/.local/share/signin/key" || echo "@nokeyfile=ok"
            id=$(sed -E 's/.*"id":"([0-9a-f]+)".*/\\1/' "$HOME/.local/share/signin/key.json")
            secret-tool search store "$id" 2>&1 | grep -q 'label = signin store key' && echo "@item=ok"
            '\(Paths.signin)' lock >/dev/null 2>&1
            MCP_CLIENT_DEFAULT_ENV=1 \(client); echo "@second=$?"
            """
        let file = box.root.appendingPathComponent("desktop.sh").path
        try script.write(toFile: file, atomically: true, encoding: .utf8)
        var env = box.environment
        env["HOME"] = box.root.path
        for name in ["XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_RUNTIME_DIR", "DBUS_SESSION_BUS_ADDRESS", "DISPLAY", "WAYLAND_DISPLAY"] { env[name] = nil }
        let closeAndRun = #"for fd in /proc/$$/fd/*; do n=${fd##*/}; [ "$n" -gt 2 ] 2>/dev/null && eval "exec $n>&-"; done; exec "$@""#
        let r = try Subprocess.run(Paths.python, [Paths.providers.appendingPathComponent("reap.py").path, "/bin/bash", "-c", closeAndRun, "bash", "/usr/bin/keyctl", "session", "-"]
                                   + Self.ownRunUser + ["/bin/bash", file], env: env.filter { !$0.value.isEmpty })
        let lines = r.stdout.split(separator: "\n")
        let answers = lines.filter { $0.hasPrefix("{") }.map { TokensForEveryAPITests.json(String($0)) }
        #expect(r.stdout.contains("@first=0") && answers.first?["sum"] as? String == "5", "\(r.stdout)\n\(r.stderr)")
        #expect(r.stdout.contains("@nokeyfile=ok") && r.stdout.contains("@item=ok"), "the store key in the Secret Service: \(r.stdout)\n\(r.stderr)")
        #expect(r.stdout.contains("@second=0") && answers.count == 2 && answers.last?["sum"] as? String == "5", "restored from the keyring: \(r.stdout)\n\(r.stderr)")
        let opened = ((try? String(contentsOfFile: portalLog, encoding: .utf8)) ?? "").split(separator: "\n")
        #expect(opened.count == 1 && MCPBridgeTests.browserLaunches(box) == 1, "one page, through the portal: \(opened)")
    }
}

/// MCP 2026-07-28 through `signin mcp`, beside the revisions of the handshake: the MCP SDK's own client, which asks
/// `server/discover` first and falls back to `initialize`, against the SDK's servers serving one era or both.
@Suite struct MCPModernRevisionTests {
    static func client(_ box: Sandbox, _ url: String) throws -> (RunResult, [String: Any]) { try MCPBridgeTests.client(box, "modern", url) }

    static let meta = #""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"}}"#

    /// A server that serves 2026-07-28 alone: the SDK's client talks 2026-07-28 through the bridge; each request
    /// carries its revision, method, name and marked arguments as headers (a non-ASCII one in base64), with no session,
    /// no GET stream and no DELETE.
    @Test func theSDKClientTalks2026ToAServerOfThatRevisionAlone() throws {
        let p = try Provider(script: "mcp_server.py", arguments: ["--modern-only"])
        defer { p.stop() }
        let url = try #require(p.readyWords.first)
        let box = try MCPServerTests.machine(p)
        let (run, answer) = try Self.client(box, url)
        #expect(run.status == 0 && answer["version"] as? String == "2026-07-28" && answer["sum"] as? String == "5", "\(run.stdout) \(run.stderr)")
        #expect(answer["region"] as? String == "region eu-west ü", "\(answer)")
        let requests = MCPClientLaunchTests.requests(p)
        #expect(requests.allSatisfy { $0["method"] as? String == "POST" && $0["session"] is NSNull && $0["version"] as? String == "2026-07-28" }, "\(requests)")
        let calls = requests.filter { $0["mcp_method"] as? String == "tools/call" }
        #expect(calls.contains { $0["mcp_name"] as? String == "regional" && $0["region"] as? String == "=?base64?ZXUtd2VzdCDDvA==?=" }, "\(calls)")
        #expect(calls.contains { $0["mcp_name"] as? String == "add" })
    }

    /// A server of the handshake era alone: the SDK's client's `server/discover` is refused as old servers refuse it,
    /// the refusal reaches the client as the server wrote it (not `-32000 http_400`, and no HTTP+SSE fallback), and the
    /// client goes on with 2025-11-25.
    @Test func theSDKClientFallsBackTo2025AtAServerOfTheHandshakeEra() throws {
        let p = try Provider(script: "mcp_server.py", arguments: ["--legacy-only"])
        defer { p.stop() }
        let url = try #require(p.readyWords.first)
        let box = try MCPServerTests.machine(p)
        let (run, answer) = try Self.client(box, url)
        #expect(run.status == 0 && answer["version"] as? String == "2025-11-25" && answer["sum"] as? String == "5", "\(run.stdout) \(run.stderr)")
        #expect(!run.stderr.contains("HTTP+SSE"), "no fallback to the legacy transport: \(run.stderr)")
    }

    /// A client of 2025-11-25 at a server of 2026-07-28 alone: its initialize gets the server's `-32022` with the
    /// versions it speaks, at once, and the bridge ends (nothing to talk to), never a hang.
    @Test func aHandshakeClientAtAModernServerIsToldTheVersions() throws {
        let p = try Provider(script: "mcp_server.py", arguments: ["--modern-only"])
        defer { p.stop() }
        let url = try #require(p.readyWords.first)
        let box = try MCPServerTests.machine(p)
        #expect(try box.signin("login", "--resource", url, "--timeout", "30").status == 0)
        let r = try box.signin(["mcp", url], stdin: MCPBridgeTests.lines([], version: "2025-11-25"))
        let first = MCPBridgeTests.messages(r.stdout).first
        let error = first?["error"] as? [String: Any]
        #expect(first?["id"] as? Int == 0 && error?["code"] as? Int == -32022, "\(r.stdout) \(r.stderr)")
        #expect((error?["data"] as? [String: Any])?["supported"] as? [String] == ["2026-07-28"], "\(r.stdout)")
    }

    /// A call whose tool marks an argument for a header, made before the client listed the tools: the server's
    /// `-32020` makes the bridge list them itself and send the call once more, with the header; the client sees the
    /// answer only.
    @Test func aCallMissingAMarkedHeaderIsSentAgainAfterTheToolsAreListed() throws {
        let p = try Provider(script: "mcp_server.py", arguments: ["--modern-only"])
        defer { p.stop() }
        let url = try #require(p.readyWords.first)
        let box = try MCPServerTests.machine(p)
        #expect(try box.signin("login", "--resource", url, "--timeout", "30").status == 0)
        let call = #"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"regional","arguments":{"region":"us"},\#(Self.meta)}}"#
        let r = try box.signin(["mcp", url], stdin: Data((call + "\n").utf8))
        let out = MCPBridgeTests.messages(r.stdout)
        #expect(out.count == 1 && out.first?["id"] as? Int == 5 && out.first?["result"] != nil, "\(r.stdout) \(r.stderr)")
        let calls = MCPClientLaunchTests.requests(p).filter { $0["mcp_method"] as? String == "tools/call" }
        #expect(calls.count == 2 && calls.last?["region"] as? String == "us", "once without the header, once with it: \(calls)")
    }
}

/// Servers that take no OAuth: a public one, and one keyed with a header of the person's own (`--header 'X-Api-Key:
/// ${KEY}'`): bridged as they are, with no sign-in, no registration and no browser.
@Suite struct MCPServersWithoutOAuthTests {
    @Test func aPublicServerIsBridgedWithNoSignIn() throws {
        let p = try Provider(script: "mcp_server.py", arguments: ["--public"])
        defer { p.stop() }
        let url = try #require(p.readyWords.first)
        let box = try MCPServerTests.machine(p)
        let (run, answer) = try MCPBridgeTests.client(box, "basic", url)
        #expect(run.status == 0 && answer["sum"] as? String == "5", "\(run.stdout) \(run.stderr)")
        let registrations = try MCPServerTests.stats(p)["registrations"] as? Int
        #expect(MCPBridgeTests.browserLaunches(box) == 0 && registrations == 0)
        #expect(try box.signin("token", "--resource", url).status == 3, "nothing stored for it")
    }

    /// The key from the environment goes on every request and no `Authorization`; without it, the server's 401 (no
    /// RFC 9728 metadata) is an error answer that says what the server asked for; an unset `${VAR}` is an error
    /// answer naming the variable.
    @Test func aServerKeyedWithAHeaderIsBridgedAndItsRefusalSaid() throws {
        let p = try Provider(script: "mcp_server.py", arguments: ["--public", "--api-key", "k-42"])
        defer { p.stop() }
        let url = try #require(p.readyWords.first)
        let box = try MCPServerTests.machine(p)
        let (run, answer) = try MCPBridgeTests.client(box, "basic", url, ["--header", "X-Api-Key: ${MCP_KEY}"], env: ["MCP_KEY": "k-42"])
        #expect(run.status == 0 && answer["sum"] as? String == "5", "\(run.stdout) \(run.stderr)")
        let stats = try MCPServerTests.stats(p)
        #expect(stats["bearer_seen"] as? Int == 0 && (stats["api_key_seen"] as? Int ?? 0) >= 3, "\(stats)")
        #expect(MCPBridgeTests.browserLaunches(box) == 0)
        let refused = try box.signin(["mcp", url], stdin: MCPBridgeTests.lines([]))
        let error = (MCPBridgeTests.messages(refused.stdout).first?["error"] as? [String: Any])?["message"] as? String ?? ""
        #expect(error.contains("ApiKey") && error.contains("--header"), "says what the server asked for: \(refused.stdout) \(refused.stderr)")
        #expect(MCPBridgeTests.browserLaunches(box) == 0)
        let unset = try box.signin(["mcp", url, "--header", "X-Api-Key: ${NOT_SET_HERE}"], stdin: MCPBridgeTests.lines([]))
        let said = (MCPBridgeTests.messages(unset.stdout).first?["error"] as? [String: Any])?["message"] as? String ?? ""
        #expect(unset.status == 2 && said.contains("NOT_SET_HERE"), "\(unset.status) \(unset.stdout) \(unset.stderr)")
    }
}
