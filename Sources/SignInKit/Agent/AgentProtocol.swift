import SignInBase
import SignInProtocol
import SignInStorage
import SignInGrant
import SignInTransport
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// signin's agent protocol, version 1: HTTP/1.1 over a Unix socket, one request per connection, answers in JSON.
/// Nothing in it can yield a refresh token, the client secret or the store key. Every path and key is spelled
/// here once (`Path`, `Key`), and a token request crosses it as the `TokenRequest` the command built, so the
/// agent answers exactly what `SignInClient.token(_:)` answers here.
///
/// On any socket (the agent's own and each forwarded session's):
/// - `GET /v1/hello` → `{"protocol": 1, "session": {...} | null, "git_hosts": [...], "docker_registries": [...]}`
///   (on the agent's own socket also `"store"`: the configuration and data folders it serves)
/// - `GET /v1/token?kind=access|id&account=A&min_ttl=S&force=1&audience=AUD&resource=URI&chain=SA,SA&email=0&profile=P&dpop_method=M&dpop_url=U` →
///   `{"token", "expires_at" (seconds since 1970, or null), "account", "subject", "kind", "token_type" (Bearer or DPoP),
///   "dpop_proof" (for a DPoP token when `dpop_url` asked; the key stays with the agent)}`; refused: 403
///   `{"error": "refused", "message"}`; too many forced refreshes: 429; not signed in: 409
///   `{"error": "not_signed_in"}`; a resource or audience the provider refused: 403 `{"error": "target_refused",
///   "target", "message"}`; a malformed request: 400
/// - `POST /v1/rejected` with the refused token in `X-Signin-Token` → 204 (the next token comes from a refresh)
///
/// On the agent's own socket only:
/// - `POST /v1/sessions?accounts=A,B&profile=P&seconds=N&confirm=1&host=H&askpass=PATH&impersonate=SA,SA` →
///   `{"id", "socket", "expires_at"}`: a forwarded session, restricted to those accounts (default: the current
///   one) of that configuration and those service-account chains, until `seconds` pass or the process that asked ends
/// - `GET /v1/sessions` → `{"sessions": [...]}`; `DELETE /v1/sessions/ID`; `POST /v1/lock` (ends every forwarded
///   session); `POST /v1/stop` (the agent ends)
public enum AgentProtocol {
    /// The version this signin speaks.
    public static let version = 1

    /// The request paths.
    public enum Path {
        public static let hello = "/v1/hello"
        public static let token = "/v1/token"
        public static let rejected = "/v1/rejected"
        public static let sessions = "/v1/sessions"
        public static let lock = "/v1/lock"
        public static let stop = "/v1/stop"
        /// One forwarded session (`DELETE` ends it).
        public static func session(_ id: String) -> String { sessions + "/" + id }
    }

    /// The keys of a forwarded session: its description (`SessionInfo`), the request that opens one
    /// (`SessionRequest`'s query) and the answer (`SessionCreated`).
    public enum SessionKey {
        public static let id = "id", host = "host", accounts = "accounts", profile = "profile", impersonate = "impersonate"
        public static let audiences = "audiences", resources = "resources", expiresAt = "expires_at", confirm = "confirm"
        public static let served = "served", createdAt = "created_at", seconds = "seconds", askpass = "askpass", socket = "socket"
    }

    /// The query and answer keys.
    public enum Key {
        public static let kind = "kind", account = "account", minTTL = "min_ttl", force = "force", audience = "audience"
        /// An access token for one API alone (RFC 8707), or exchanged with `audience` (RFC 8693).
        public static let resource = "resource"
        public static let chain = "chain", email = "email", profile = "profile"
        /// `1`: no chain given, so the agent's configuration's `impersonate_service_account` applies.
        public static let configuredChain = "configured_chain"
        /// Google Cloud's family key (`GoogleCloudFamily.agentQueryKey`): a family encodes its own part of a request.
        @available(*, deprecated, renamed: "GoogleCloudFamily.agentQueryKey")
        public static let googleCloud = "google_cloud"
        public static let token = "token", expiresAt = "expires_at", subject = "subject"
        /// DPoP (RFC 9449): the request a proof is asked for, and the answer's token type and proof.
        public static let dpopMethod = "dpop_method", dpopURL = "dpop_url", tokenType = "token_type", dpopProof = "dpop_proof"
        public static let error = "error", message = "message", store = "store"
        /// A 429's seconds until the next forced refresh may go.
        public static let retryAfter = "retry_after"
        /// The hello's settings of a session's configuration, for the remote side's bridges (the families' own
        /// are theirs: `Hello.familySettings`).
        public static let gitHosts = "git_hosts", dockerRegistries = "docker_registries"
        public static let gitResources = "git_resources"
        /// The hello's own keys.
        public static let protocolVersion = "protocol", signinVersion = "signin", session = "session", sessions = "sessions"
        public static let rejectedToken = "X-Signin-Token"
        /// A `target_refused` answer's resource or audience.
        public static let target = "target"
    }

    /// Every key a token request may carry; a session restricted to APIs refuses a request with any other (what it
    /// does not know, it does not answer).
    public static let tokenRequestKeys: Set<String> = Set([
        Key.kind, Key.minTTL, Key.force, Key.account, Key.audience, Key.resource, Key.chain, Key.configuredChain,
        Key.email, Key.dpopMethod, Key.dpopURL, Key.profile,
    ]).union(TokenFamilies.all.flatMap(\.agentQueryKeys))

    /// The query of a token request (`profile`: a configuration name, on the agent's own socket).
    public static func query(_ r: TokenRequest, profile: String?) -> [(String, String)] {
        var q = [(Key.kind, r.kind == .id ? "id" : "access"), (Key.minTTL, String(Int(r.minimumValidity.timeInterval)))]
        if r.forceRefresh { q.append((Key.force, "1")) }
        if let a = r.account { q.append((Key.account, a)) }
        if let a = r.audience { q.append((Key.audience, a)) }
        if let a = r.resource { q.append((Key.resource, a)) }
        if !r.serviceAccountChain.isEmpty { q.append((Key.chain, r.serviceAccountChain.joined(separator: ","))) }
        if case .configured = r.principal { q.append((Key.configuredChain, "1")) }
        for family in TokenFamilies.all { q += family.agentQuery(r) }
        if !r.includeEmail { q.append((Key.email, "0")) }
        if let target = r.proofFor { q += [(Key.dpopMethod, target.method), (Key.dpopURL, target.url)] }
        if let profile { q.append((Key.profile, profile)) }
        return q
    }

    /// A token request read back from its query, checked: the kind is one of the two, `min_ttl` a number of seconds
    /// within a day, each service account an e-mail, the configuration a name (never a path). The message says
    /// which key is wrong.
    public static func tokenRequest(_ q: [String: String]) -> Result<(TokenRequest, profile: String?), AgentRequestError> {
        var r = TokenRequest()
        switch q[Key.kind] ?? "access" {
        case "access": r.kind = .access
        case "id": r.kind = .id
        case let other: return .failure(.init("kind \"\(other.withoutControlCharacters)\" is not access or id"))
        }
        if let v = q[Key.minTTL] {
            guard let n = Int(v), (0...TokenRequest.maximumValidity).contains(n) else {
                return .failure(.init("min_ttl must be a number of seconds from 0 to \(TokenRequest.maximumValidity)"))
            }
            r.minimumValidity = .seconds(n)
        }
        r.forceRefresh = q[Key.force] == "1"
        r.account = q[Key.account].flatMap { $0.isEmpty ? nil : $0 }
        r.audience = q[Key.audience].flatMap { $0.isEmpty ? nil : $0 }
        if let resource = q[Key.resource], !resource.isEmpty {
            guard SignInConfiguration.isValidResource(resource) else { return .failure(.init("resource must be an absolute URI without a fragment")) }
            r.resource = resource
        }
        r.includeEmail = q[Key.email] != "0"
        if let chain = q[Key.chain], !chain.isEmpty {
            let items = chain.split(separator: ",").map(String.init)
            guard items.allSatisfy(TokenRequest.isServiceAccountName) else { return .failure(.init("chain must name service accounts by e-mail")) }
            r.serviceAccountChain = items
        }
        if r.serviceAccountChain.isEmpty && q[Key.configuredChain] == "1" { r.principal = .configured }
        for family in TokenFamilies.all {
            if let problem = family.readAgentQuery(q, into: &r) { return .failure(.init(problem)) }
        }
        if let url = q[Key.dpopURL] {
            let target = TokenRequest.DPoPTarget(method: q[Key.dpopMethod] ?? "GET", url: url)
            if let problem = target.problem { return .failure(.init("dpop_url and dpop_method: \(problem)")) }
            r.proofFor = target
        }
        let profile = q[Key.profile].flatMap { $0.isEmpty ? nil : $0 }
        if let problem = SignInConfiguration.profileNameProblem(profile, source: "profile") { return .failure(.init(problem)) }
        return .success((r, profile))
    }

    /// The agent's socket: `$XDG_RUNTIME_DIR/signin/agent.sock`, else `/tmp/signin-UID/agent.sock`.
    public static func socketPath(environment: [String: String]) -> String { folder(environment: environment) + "/agent.sock" }

    /// The folder (0700) of the agent's sockets.
    public static func folder(environment: [String: String]) -> String {
        if let run = environment["XDG_RUNTIME_DIR"], run.hasPrefix("/") { return run + "/signin" }
        return "/tmp/signin-\(Posix.geteuid())"
    }

    /// Why the agent's folder cannot be trusted, or nil: it must be a folder (not a link) of this user's that no
    /// one else can write in. Under `/tmp` another user may have made it first; then it is not used at all.
    public static func folderProblem(_ folder: String) -> String? {
        guard case .success(let st) = Posix.status(ofLink: folder) else { return nil }
        guard st.kind == .directory else { return "\(folder) is not a folder" }
        guard st.isOurs else { return "\(folder) belongs to another user (uid \(st.owner)): someone else made it first; remove it, or set XDG_RUNTIME_DIR" }
        // As ssh's StrictModes: others may not write in it (they could replace the socket); the socket itself is 0600.
        guard st.permissions & 0o022 == 0 else { return "\(folder) can be written by other users (mode \(String(st.permissions & 0o777, radix: 8))); make it 0700" }
        return nil
    }

    /// A new file's path in this user's runtime folder (made 0700, refused when another user could use it): `prefix`
    /// and 16 random hex digits (OpenSSL's generator). For `signin exec --token-file`.
    public static func newRuntimeFile(_ prefix: String, environment: [String: String]) throws(SignInError) -> String {
        try usableFolder(environment: environment) + "/" + prefix + Hex.encode(try Crypto.randomBytes(8))
    }

    /// A new file name in the runtime folder that names this process as its owner (`PREFIX` `PID.START` `-` random),
    /// after removing every file of that prefix whose owner is gone (a signin killed before it could remove its own
    /// file: a token file nobody renews would otherwise stay, with a live token, until logout).
    public static func newOwnedRuntimeFile(_ prefix: String, environment: [String: String]) throws(SignInError) -> String {
        let folder = try usableFolder(environment: environment)
        ProcessIdentity.removeOrphanedFiles(prefix, in: folder)
        guard let me = ProcessIdentity.current else { return try newRuntimeFile(prefix, environment: environment) }
        return folder + "/" + prefix + me.tag + "-" + Hex.encode(try Crypto.randomBytes(8))
    }


    /// The runtime folder, made when missing and made 0700 when it is this user's, for signin to put sockets and
    /// files in; `.system` with `folderProblem`'s reason when it cannot be trusted.
    static func usableFolder(environment: [String: String]) throws(SignInError) -> String {
        let folder = folder(environment: environment)
        if let failed = Directory.create(folder) { throw .storeUnwritable(path: failed.path, reason: failed.reason) }
        if case .success(let st) = Posix.status(ofLink: folder), st.isOurs, st.kind == .directory { Posix.chmod(folder, 0o700) }
        if let problem = folderProblem(folder) { throw .system(reason: "signin's runtime folder cannot be used: \(problem)") }
        return folder
    }

    /// What an agent serves, as its hello says: the configuration and data folders of this environment. An agent
    /// started for another HOME or data folder of the same user is not this environment's agent.
    public static func store(environment: [String: String]) -> String {
        SignInConfiguration.directory(environment: environment) + "|" + CredentialStore.defaultDirectory(environment: environment)
    }

    /// The agent's log of what it served for forwarded sessions: `$XDG_STATE_HOME/signin/agent.log`
    /// (default `~/.local/state/signin/agent.log`), kept under `logLimit` bytes (the older half in `agent.log.1`).
    public static func logPath(environment: [String: String]) -> String {
        ProcessEnvironment.stateDirectory(xdgStateHome: environment["XDG_STATE_HOME"], home: ProcessEnvironment.home(environment)) + "/agent.log"
    }

    /// The most `agent.log` grows to before it is moved to `agent.log.1` (which it replaces).
    public static let logLimit = 1 << 20
}

/// A token request over the agent's socket that is not well formed; `message` names the key.
public struct AgentRequestError: Error, Sendable {
    public let message: String
    init(_ message: String) { self.message = message }
}
