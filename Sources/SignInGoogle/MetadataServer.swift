import SignInBase
import SignInProtocol
import SignInStorage
import SignInTransport
import SignInGrant
import Dispatch
import FoundationEssentials

/// A Google Compute Engine metadata server on `127.0.0.1`, serving this client's sign-in to Google's own tools:
/// gcloud, every Google client library through Application Default Credentials, anything that reads
/// `GCE_METADATA_HOST`. No plaintext copy of the grant is made anywhere; the tools only ever see access and ID
/// tokens.
///
/// How each request is answered:
/// 1. Not from this user's own processes (the kernel says who connects), not addressed as `127.0.0.1:PORT`, not a
///    GET, without `Metadata-Flavor: Google`, or relayed by a proxy (`X-Forwarded-For`): refused, as the real
///    server refuses (a web page cannot send the header without a CORS preflight, which is refused).
/// 2. The account (`instance/service-accounts/...`): the impersonated service account when there is one,
///    else the signed-in person, under their e-mail and as `default`.
/// 3. `.../token`: through the same path as `signin token` (no network while the stored token has five minutes
///    left, one refresh for many callers); with impersonation, the service account's token minted with the
///    person's (`serviceAccountAccessToken`). Scopes the grant lacks: a JSON error and `.scopeMissing`. With
///    `google_federation_audience`, the token is bought at Google's STS with the person's ID token instead (and,
///    impersonating, the service account's with that one), for the scopes asked.
/// 4. `.../identity?audience=A`: the service account's ID token for A; without impersonation only the client's
///    own audience can be had (the person's ID token), any other is a JSON error and `.audienceUnavailable`.
/// 5. `project/project-id` and `numeric-project-id` from the configuration (the number looked up once through
///    the Cloud Resource Manager API when only the ID is given); absent: 404, and gcloud will not use the server.
/// 6. Anything else: 404. A refresh token, the client secret or the store key is never part of any answer.
public final class MetadataServer: @unchecked Sendable {
    /// What the server reports while it runs; never a token.
    public enum Event: Sendable, Equatable {
        /// A request answered (`status` is the HTTP status).
        case request(path: String, status: Int)
        /// A connection or request refused by the rules of step 1.
        case refused(reason: String)
        /// A tool asked for scopes the person's grant lacks.
        case scopeMissing(scopes: [String], account: String)
        /// A tool asked for an ID token whose audience only a service account can have.
        case audienceUnavailable(audience: String)
        /// A token could not be had (not signed in, the provider or the IAM API refused...).
        case failure(SignInError)
    }

    /// The port the server listens on.
    public let port: Int
    /// The account the tools see (an impersonated chain's target, else the person).
    public var impersonating: [String] { client.serviceAccountChain(for: principal) }
    /// Whose tokens the tools get.
    let principal: TokenRequest.Principal
    private let client: any PersonGrant
    private let account: String?
    private let onEvent: @Sendable (Event) -> Void
    private let service: LocalService
    private var server: LoopbackServer { service.server }
    private let projectNumber = Locked<String?>(nil)

    /// `host:port` for the environment variables below.
    public var address: String { "127.0.0.1:\(port)" }

    /// What a tool's environment needs to find this server: `GCE_METADATA_HOST` (google-auth, Go, Java),
    /// `GCE_METADATA_IP` (google-auth's ping, Node) and `GCE_METADATA_ROOT` (gcloud).
    public var environment: [String: String] {
        ["GCE_METADATA_HOST": address, "GCE_METADATA_IP": address, "GCE_METADATA_ROOT": address]
    }

    /// Binds `127.0.0.1:port` (0: a free port the system chooses). `impersonate` overrides the configuration's
    /// `impersonate_service_account` (an empty list: the person's own tokens).
    public init(client: any PersonGrant, account: String? = nil, impersonate: [String]? = nil, port: Int = 0,
                onEvent: @escaping @Sendable (Event) -> Void = { _ in }) throws(SignInError) {
        self.client = client
        self.account = account
        self.principal = impersonate.map { $0.isEmpty ? .person : .serviceAccount(chain: $0) } ?? .configured
        self.onEvent = onEvent
        projectNumber.withLock { $0 = client.configuration.projectNumber }
        service = LocalService(try LoopbackServer(port: port, sameUserOnly: true, methods: ["GET"], addressHostOnly: true,
                                                  errorResponse: ComputeMetadataHandler.refusal))
        self.port = service.server.port
    }

    /// Serves on a thread of its own until `stop()`.
    public func start() { service.start { [self] in serveUntilStopped() } }

    /// Stops serving and waits until the request in hand (if any) is answered.
    public func stop() { service.stop() }

    private func serveUntilStopped() {
        let handler = ComputeMetadataHandler(source: Source(server: self))
        _ = try? service.server.serve(canceller: service.canceller, notice: { [onEvent] notice in
            switch notice {
            case .refusedHost(let reason), .refusedPeer(let reason): onEvent(.refused(reason: reason))
            }
        }, handler: { [onEvent] (request) throws(SignInError) -> (LoopbackResponse, Bool?) in
            let (response, outcome) = handler.answer(request)
            switch outcome {
            case .refused(let reason): onEvent(.refused(reason: reason))
            case .failed(let e): onEvent(.failure(e))
            case .served, .notFound, .declined: break
            }
            onEvent(.request(path: request.path, status: Int(response.status.prefix(3)) ?? 0))
            return (response, nil)
        }, failure: { ComputeMetadataHandler.failureResponse($0) })
        server.close()
    }

    /// The answers: every token through the one token path (`SignInClient.token`), which decides the principal,
    /// federation and the scope rule; this type only says what a tool asked (and reports what it was refused).
    private struct Source: ComputeMetadataSource {
        let server: MetadataServer
        var client: any PersonGrant { server.client }
        var chain: [String] { server.impersonating }
        /// Tools refresh a token when under about four minutes remain: hand out none with less than five.
        static let margin = Duration.seconds(300)

        private func request(_ kind: TokenKind) -> TokenRequest {
            var r = TokenRequest(kind: kind, minimumValidity: Self.margin, account: server.account)
            r.principal = server.principal
            r.forGoogleCloud = true
            return r
        }

        private func federation(_ r: TokenRequest) -> WorkloadIdentityFederation? {
            GoogleCloudFamily.federation(for: r, configuration: client.configuration)
        }

        func email() throws(SignInError) -> String {
            if let target = chain.last { return target }
            guard let c = try client.credentials(account: server.account) else { throw client.noAccount() }
            return c.profile.email ?? c.profile.userID
        }

        func scopes() throws(SignInError) -> [String] {
            if !chain.isEmpty || federation(request(.access)) != nil { return [GoogleCloudFamily.cloudPlatformScope] }
            guard let c = try client.credentials(account: server.account) else { throw client.noAccount() }
            return c.grantedScopes
        }

        func accessToken(scopes asked: [String]?) throws(SignInError) -> IssuedToken {
            var r = request(.access)
            r.scopes = asked
            do {
                return try client.token(r)
            } catch {
                // The scope rule is the token path's; what it refused is reported here, for the log.
                if chain.isEmpty, federation(r) == nil, let asked, let stored = try? client.credentials(account: server.account),
                   let missing = GoogleProvider.rules.scopesNotGranted(asked, granted: stored.grantedScopes) {
                    server.onEvent(.scopeMissing(scopes: missing, account: stored.profile.email ?? stored.profile.userID))
                }
                throw error
            }
        }

        func idToken(audience: String, full: Bool) throws(SignInError) -> SignInToken {
            if chain.isEmpty && audience != client.configuration.clientID { server.onEvent(.audienceUnavailable(audience: audience)) }
            var r = request(.id)
            r.audience = audience
            r.includeEmail = full
            return try client.token(r).token
        }

        func projectID() -> String? { client.configuration.projectID }

        func numericProjectID() throws(SignInError) -> String? {
            if let known = server.projectNumber.withLock({ $0 }) { return known }
            guard let id = client.configuration.projectID else { return nil }
            // The person's own token (or the federated one): the project is the configuration's, not a service account's.
            var r = request(.access)
            r.principal = .person
            let bearer = try client.token(r).token.value
            let n = try ResourceManagerClient(configuration: client.configuration).projectNumber(of: id, bearer: bearer)
            server.projectNumber.withLock { $0 = n }
            return n
        }
    }
}
