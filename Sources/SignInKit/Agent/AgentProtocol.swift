import FoundationEssentials

/// signin's agent protocol, version 1: HTTP/1.1 over a Unix socket, one request per connection, answers in JSON.
/// Nothing in it can yield a refresh token, the client secret or the store key.
///
/// On any socket (the agent's own and each forwarded session's):
/// - `GET /v1/hello` → `{"protocol": 1, "session": {...} | null, "git_hosts": [...], "docker_registries": [...]}`
/// - `GET /v1/token?kind=access|id&account=A&min_ttl=S` → `{"token", "expires_at" (seconds since 1970, or null),
///   "account", "kind"}`; refused: 403 `{"error": "refused", "message"}`; not signed in: 409 `{"error": "not_signed_in"}`
/// - `POST /v1/rejected` with the refused token in `X-Signin-Token` → 204 (the next token comes from a refresh)
///
/// On the agent's own socket only:
/// - `POST /v1/sessions?accounts=A,B&profile=P&seconds=N&confirm=1&host=H&askpass=PATH` → `{"id", "socket", "expires_at"}`:
///   a forwarded session, restricted to those accounts (default: the current one) of that configuration, until
///   `seconds` pass or the process that asked ends
/// - `GET /v1/sessions` → `{"sessions": [...]}`; `DELETE /v1/sessions/ID`; `POST /v1/lock` (ends every forwarded
///   session); `POST /v1/stop` (the agent ends)
public enum AgentProtocol {
    /// The version this signin speaks.
    public static let version = 1

    /// The agent's socket: `$XDG_RUNTIME_DIR/signin/agent.sock`, else `/tmp/signin-UID/agent.sock`.
    public static func socketPath(environment: [String: String]) -> String { folder(environment: environment) + "/agent.sock" }

    /// The folder (0700) of the agent's sockets.
    public static func folder(environment: [String: String]) -> String {
        if let run = environment["XDG_RUNTIME_DIR"], run.hasPrefix("/") { return run + "/signin" }
        return "/tmp/signin-\(getuid())"
    }

    /// The agent's log of what it served for forwarded sessions: `$XDG_STATE_HOME/signin/agent.log`
    /// (default `~/.local/state/signin/agent.log`).
    public static func logPath(environment: [String: String]) -> String {
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") { return state + "/signin/agent.log" }
        return ProcessEnvironment.home(environment) + "/.local/state/signin/agent.log"
    }
}

#if canImport(Glibc)
import Glibc
#endif
