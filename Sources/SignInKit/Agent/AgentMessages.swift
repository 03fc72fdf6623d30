import SignInBase
import SignInProtocol
import SignInStorage
import SignInGrant
import SignInTransport
import FoundationEssentials

/// The agent protocol's answers as types both ends encode and decode (`AgentProtocol` has the paths and keys):
/// a token answer, and a refusal or failure with a code the remote side switches on.
extension AgentProtocol {
    /// A token request's answer (`GET /v1/token`, 200).
    public struct TokenAnswer: Sendable, Equatable {
        public var token: String
        /// Seconds since 1970, or nil when the provider said no expiry.
        public var expiresAt: Int?
        /// The person's e-mail (or `sub`), or the service account's e-mail.
        public var account: String
        public var subject: String
        public var kind: TokenKind
        /// `Bearer`, or `DPoP` for a token bound to the laptop's key.
        public var tokenType: String
        /// A proof for the request `dpop_url` named, for a DPoP token.
        public var dpopProof: String?

        public init(token: String, expiresAt: Int?, account: String, subject: String, kind: TokenKind, tokenType: String, dpopProof: String?) {
            self.token = token
            self.expiresAt = expiresAt
            self.account = account
            self.subject = subject
            self.kind = kind
            self.tokenType = tokenType
            self.dpopProof = dpopProof
        }

        init(_ issued: IssuedToken) {
            self.init(token: issued.token.value, expiresAt: issued.token.expirationDate.map { Int($0.timeIntervalSince1970) }, account: issued.name,
                      subject: issued.subject, kind: issued.kind, tokenType: issued.tokenType, dpopProof: issued.dpopProof)
        }

        package var json: JSONValueOut {
            var o: [String: JSONValueOut] = [Key.token: .string(token), Key.expiresAt: expiresAt.map { .int($0) } ?? .null, Key.account: .string(account),
                                             Key.subject: .string(subject), Key.kind: .string(kind == .id ? "id" : "access"), Key.tokenType: .string(tokenType)]
            if let dpopProof { o[Key.dpopProof] = .string(dpopProof) }
            return .object(o)
        }

        /// Read back, checked: the token and proof are token text (no control characters or spaces), the type one of
        /// the two, the kind one of the two. Nil for anything else.
        public init?(json o: [String: JSONValue]) {
            guard let token = o[Key.token]?.string, TokenResponse.isTokenText(token) else { return nil }
            let kind: TokenKind
            switch o[Key.kind]?.string ?? "access" {
            case "access": kind = .access
            case "id": kind = .id
            default: return nil
            }
            let type = o[Key.tokenType]?.string ?? "Bearer"
            guard type == "Bearer" || type == "DPoP" else { return nil }
            let proof = o[Key.dpopProof]?.string
            if let proof, !TokenResponse.isTokenText(proof) { return nil }
            let account = o[Key.account]?.string ?? ""
            self.init(token: token, expiresAt: o[Key.expiresAt]?.number.map { Int($0) }, account: account, subject: o[Key.subject]?.string ?? account,
                      kind: kind, tokenType: type, dpopProof: proof)
        }
    }

    /// A request the agent refused or could not serve: `{"error": CODE, "message", ...}` with the HTTP status of its code.
    public struct Failure: Sendable, Equatable, Error {
        /// What went wrong, as the remote side switches on it.
        public enum Code: String, Sendable, CaseIterable {
            /// The session does not allow it (an account, a configuration, a chain, an API not forwarded; it ended).
            case refused
            /// Nobody is signed in on the laptop, for that configuration.
            case notSignedIn = "not_signed_in"
            case noSuchAccount = "no_such_account"
            /// The token path cannot do it at all (as locally: exit 2).
            case unsupported
            /// The provider will not issue a token for that resource or audience (as locally: exit 7).
            case targetRefused = "target_refused"
            /// A refresh the remote side chose, too soon after the last one.
            case tooMany = "too_many"
            case badRequest = "bad_request"
            case noConfiguration = "no_configuration"
            case noSession = "no_session"
            case notFound = "not_found"
            case noToken = "no_token"
            case socket
            case `internal`
            /// Any other failure on the laptop (the provider, the network, the store).
            case failed

            /// The HTTP status line an answer with this code has.
            public var status: String {
                switch self {
                case .refused, .targetRefused: return "403 Forbidden"
                case .notSignedIn, .noSuchAccount, .noConfiguration: return "409 Conflict"
                case .unsupported, .badRequest, .noToken: return "400 Bad Request"
                case .tooMany: return "429 Too Many Requests"
                case .noSession, .notFound: return "404 Not Found"
                case .socket, .internal: return "500 Internal Server Error"
                case .failed: return "502 Bad Gateway"
                }
            }
        }

        public var code: Code
        public var message: String?
        /// With `targetRefused`: the resource or audience.
        public var target: String?
        /// With `tooMany`: seconds until the next forced refresh may go.
        public var retryAfter: Int?

        public init(_ code: Code, _ message: String? = nil, target: String? = nil, retryAfter: Int? = nil) {
            self.code = code
            self.message = message
            self.target = target
            self.retryAfter = retryAfter
        }

        package var json: JSONValueOut {
            var o: [String: JSONValueOut] = [Key.error: .string(code.rawValue)]
            if let message { o[Key.message] = .string(message) }
            if let target { o[Key.target] = .string(target) }
            if let retryAfter { o[Key.retryAfter] = .int(retryAfter) }
            return .object(o)
        }

        /// Read back from an answer's body and status; an unknown code (a newer agent) is `failed`.
        public init(json o: [String: JSONValue], status: Int) {
            let code = o[Key.error]?.string.flatMap(Code.init(rawValue:)) ?? (status == 429 ? .tooMany : .failed)
            self.init(code, o[Key.message]?.string.map { $0.withoutControlCharacters }, target: o[Key.target]?.string.map { $0.withoutControlCharacters },
                      retryAfter: o[Key.retryAfter]?.number.map { Int($0) })
        }

        /// The error a remote command reports for it, as it would locally: what the token path cannot do at all is
        /// `.unsupported`, a refused resource or audience `.targetRefused`, a refresh too soon `.rateLimited`;
        /// anything else not signed in (exit 3), with the agent's reason.
        public var error: SignInError {
            let text = message ?? "HTTP \(code.status)"
            switch code {
            case .unsupported: return .unsupported(reason: text)
            case .targetRefused: return .targetRefused(endpoint: "The forwarded agent", target: target ?? "that target", detail: text)
            case .tooMany: return .rateLimited(endpoint: "The forwarded agent (\(text))", retryAfterSeconds: retryAfter)
            default: return .noPreviousSignIn(reason: .agentRefused(reason: text))
            }
        }
    }
}

extension AgentProtocol {
    /// A forwarded session as the agent describes it (in `hello` on its socket, and in `GET /v1/sessions`).
    public struct SessionInfo: Sendable, Equatable {
        public var id: String
        /// The destination `signin ssh` was given.
        public var host: String
        /// The accounts forwarded, by e-mail (or `sub`).
        public var accounts: [String]
        /// The configuration forwarded (a name, or a file's path); nil: the default one.
        public var profile: String?
        /// The service-account chains the remote side may ask for, each joined by commas.
        public var impersonate: [String]
        /// When not empty, the only APIs served (`signin ssh --audience`, `--resource`).
        public var audiences: [String]
        public var resources: [String]
        /// Seconds since 1970, or nil: the SSH session's end.
        public var expiresAt: Int?
        public var confirm: Bool
        public var served: Int
        public var createdAt: Int

        public init(id: String, host: String, accounts: [String], profile: String?, impersonate: [String], audiences: [String], resources: [String],
                    expiresAt: Int?, confirm: Bool, served: Int, createdAt: Int) {
            self.id = id
            self.host = host
            self.accounts = accounts
            self.profile = profile
            self.impersonate = impersonate
            self.audiences = audiences
            self.resources = resources
            self.expiresAt = expiresAt
            self.confirm = confirm
            self.served = served
            self.createdAt = createdAt
        }

        package var json: JSONValueOut {
            func strings(_ a: [String]) -> JSONValueOut { .array(a.map { .string($0) }) }
            return .object([SessionKey.id: .string(id), SessionKey.host: .string(host), SessionKey.accounts: strings(accounts), SessionKey.profile: profile.map { .string($0) } ?? .null,
                            SessionKey.impersonate: strings(impersonate), SessionKey.audiences: strings(audiences), SessionKey.resources: strings(resources),
                            SessionKey.expiresAt: expiresAt.map { .int($0) } ?? .null, SessionKey.confirm: .bool(confirm), SessionKey.served: .int(served), SessionKey.createdAt: .int(createdAt)])
        }

        /// Read back; what came over the socket is shown without control characters.
        public init?(json o: [String: JSONValue]) {
            guard let id = o[SessionKey.id]?.string else { return nil }
            func strings(_ k: String) -> [String] { o[k]?.array?.compactMap(\.string).map(\.withoutControlCharacters) ?? [] }
            self.init(id: id.withoutControlCharacters, host: (o[SessionKey.host]?.string ?? "?").withoutControlCharacters, accounts: strings(SessionKey.accounts),
                      profile: o[SessionKey.profile]?.string?.withoutControlCharacters, impersonate: strings(SessionKey.impersonate), audiences: strings(SessionKey.audiences),
                      resources: strings(SessionKey.resources), expiresAt: o[SessionKey.expiresAt]?.number.map { Int($0) }, confirm: o[SessionKey.confirm]?.bool == true,
                      served: o[SessionKey.served]?.number.map { Int($0) } ?? 0, createdAt: o[SessionKey.createdAt]?.number.map { Int($0) } ?? 0)
        }
    }

    /// The agent's `hello`: its protocol, its session on a forwarded socket (with the settings of the session's
    /// configuration the remote side's bridges need), or on its own socket the store it serves.
    public struct Hello: Sendable, Equatable {
        public var protocolVersion: Int
        /// signin's version on the machine the agent runs on.
        public var signinVersion: String?
        public var session: SessionInfo?
        /// On the agent's own socket: the configuration and data folders it serves.
        public var store: String?
        public var gitHosts: [String]
        /// The session configuration's `git_resources` (a host pattern to a resource).
        public var gitResources: [String: String] = [:]
        public var dockerRegistries: [String]
        /// The session configuration's settings the families forward for the remote side's tools (their endpoints),
        /// by their hello keys (`GoogleCloudFamily.stsEndpointSetting`, `AWSFamily.stsEndpointSetting`, ...).
        public var familySettings: [String: String] = [:]

        public init(protocolVersion: Int = AgentProtocol.version, signinVersion: String? = nil, session: SessionInfo? = nil, store: String? = nil,
                    gitHosts: [String] = [], dockerRegistries: [String] = [], familySettings: [String: String] = [:]) {
            self.protocolVersion = protocolVersion
            self.signinVersion = signinVersion
            self.session = session
            self.store = store
            self.gitHosts = gitHosts
            self.dockerRegistries = dockerRegistries
            self.familySettings = familySettings
        }

        package var json: JSONValueOut {
            var o: [String: JSONValueOut] = [Key.protocolVersion: .int(protocolVersion), Key.session: session?.json ?? .null]
            if let signinVersion { o[Key.signinVersion] = .string(signinVersion) }
            if let store { o[Key.store] = .string(store) }
            if session != nil {
                o[Key.gitHosts] = .array(gitHosts.map { .string($0) })
                if !gitResources.isEmpty { o[Key.gitResources] = .object(gitResources.mapValues { .string($0) }) }
                o[Key.dockerRegistries] = .array(dockerRegistries.map { .string($0) })
            }
            for (key, value) in familySettings { o[key] = .string(value) }
            return .object(o)
        }

        /// Read back. The families' settings are endpoints: one that is not an http(s) URL by signin's rules is left out.
        public init(json o: [String: JSONValue]) {
            func strings(_ k: String) -> [String] { o[k]?.array?.compactMap(\.string) ?? [] }
            var settings: [String: String] = [:]
            for key in TokenFamilies.forwardedSettingKeys {
                if let v = o[key]?.string, EndpointURL.problem(v) == nil { settings[key] = v }
            }
            defer {
                if case .object(let m)? = o[Key.gitResources] {
                    for (k, v) in m { if let r = v.string, GitHosts.isValidPattern(k), SignInConfiguration.isValidResource(r) { gitResources[k] = r } }
                }
            }
            self.init(protocolVersion: o[Key.protocolVersion]?.number.map { Int($0) } ?? 0, signinVersion: o[Key.signinVersion]?.string,
                      session: o[Key.session]?.object.flatMap(SessionInfo.init(json:)), store: o[Key.store]?.string, gitHosts: strings(Key.gitHosts),
                      dockerRegistries: strings(Key.dockerRegistries), familySettings: settings)
        }
    }

    /// What `signin ssh` asks of the agent's own socket (`POST /v1/sessions`): a forwarded session's limits. The query
    /// both ends read and write; the agent refuses one that does not read back (`init(query:)`), naming the key.
    public struct SessionRequest: Sendable, Equatable {
        /// The destination `signin ssh` was given (shown in questions and the log).
        public var host: String
        /// The accounts forwarded, as named (e-mail or `sub`); empty: the current one.
        public var accounts: [String] = []
        /// A configuration name, or (from `signin ssh -c FILE`) a file's absolute path; nil: the default one.
        public var profile: String?
        /// How long the session holds, in seconds; nil: as long as the `signin ssh`.
        public var seconds: Int?
        /// The service-account chains the remote side may ask for.
        public var chains: [[String]] = []
        /// When either is not empty, the only tokens served: access tokens exchanged for one of `audiences`, or for
        /// one of `resources` alone.
        public var audiences: [String] = []
        public var resources: [String] = []
        /// Each new account, token kind, service account and API put to the person first, through `askpass`.
        public var askpass: String?

        public init(host: String) { self.host = host }

        public var query: [(String, String)] {
            var q = [(SessionKey.host, host)]
            if !accounts.isEmpty { q.append((SessionKey.accounts, accounts.joined(separator: ","))) }
            if let profile { q.append((SessionKey.profile, profile)) }
            if let seconds { q.append((SessionKey.seconds, String(seconds))) }
            if !chains.isEmpty { q.append((SessionKey.impersonate, chains.map { $0.joined(separator: ",") }.joined(separator: ";"))) }
            if !audiences.isEmpty { q.append((SessionKey.audiences, audiences.joined(separator: "\n"))) }
            if !resources.isEmpty { q.append((SessionKey.resources, resources.joined(separator: "\n"))) }
            if let askpass { q += [(SessionKey.confirm, "1"), (SessionKey.askpass, askpass)] }
            return q
        }

        /// Read back and checked: the configuration a name or an absolute path, each service account an e-mail,
        /// each resource an absolute URI, the seconds a positive number.
        public init(query q: [String: String]) throws(AgentRequestError) {
            host = (q[SessionKey.host] ?? "?").withoutControlCharacters
            accounts = (q[SessionKey.accounts] ?? "").split(separator: ",").map { $0.trimmingWhitespace }.filter { !$0.isEmpty }
            profile = q[SessionKey.profile].flatMap { $0.isEmpty ? nil : $0 }
            if let profile, !SignInConfiguration.isValidProfileName(profile) && !(profile.hasPrefix("/") && !profile.contains("/../")) {
                throw AgentRequestError("profile \"\(profile.withoutControlCharacters)\" is not a configuration name or file")
            }
            if let s = q[SessionKey.seconds], !s.isEmpty {
                guard let n = Int(s), n > 0 else { throw AgentRequestError("seconds must be a positive number") }
                seconds = n
            }
            for chain in (q[SessionKey.impersonate] ?? "").split(separator: ";").map(String.init) where !chain.isEmpty {
                let items = chain.split(separator: ",").map(String.init)
                guard items.allSatisfy(TokenRequest.isServiceAccountName) else { throw AgentRequestError("impersonate must name service accounts by e-mail") }
                if !chains.contains(items) { chains.append(items) }
            }
            audiences = (q[SessionKey.audiences] ?? "").split(separator: "\n").map(String.init).filter { !$0.isEmpty }
            resources = (q[SessionKey.resources] ?? "").split(separator: "\n").map(String.init).filter { !$0.isEmpty }
            if !resources.allSatisfy(SignInConfiguration.isValidResource) { throw AgentRequestError("resources must be absolute URIs without a fragment") }
            if q[SessionKey.confirm] == "1" { askpass = q[SessionKey.askpass] ?? "" }
        }
    }

    /// The agent's answer to a `SessionRequest`: the session's ID and the socket to forward.
    public struct SessionCreated: Sendable, Equatable {
        public var id: String
        public var socket: String
        /// Seconds since 1970, or nil: the SSH session's end.
        public var expiresAt: Int?

        public init(id: String, socket: String, expiresAt: Int?) {
            self.id = id
            self.socket = socket
            self.expiresAt = expiresAt
        }

        package var json: JSONValueOut {
            .object([SessionKey.id: .string(id), SessionKey.socket: .string(socket), SessionKey.expiresAt: expiresAt.map { .int($0) } ?? .null])
        }

        /// Read back; nil when the ID is not hex or the socket not an absolute path.
        public init?(json o: [String: JSONValue]) {
            guard let id = o[SessionKey.id]?.string, !id.isEmpty, id.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }),
                  let socket = o[SessionKey.socket]?.string, socket.hasPrefix("/") else { return nil }
            self.init(id: id, socket: socket, expiresAt: o[SessionKey.expiresAt]?.number.map { Int($0) })
        }
    }
}
