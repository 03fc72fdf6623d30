import SignInBase
import SignInProtocol
import FoundationEssentials

/// A token answered by `SignInClient.token(_:)`, and whom it is for.
public struct IssuedToken: Sendable, Equatable {
    public let token: SignInToken
    public let kind: TokenKind
    /// The person's `sub`, or the service account's e-mail.
    public let subject: String
    /// The person's e-mail (their `sub` when the provider gave none), or the service account's e-mail.
    public let name: String
    /// `DPoP` when `token` is the person's access token bound to this machine's key (RFC 9449), else `Bearer`.
    public package(set) var tokenType: String = "Bearer"
    /// The key a `DPoP` token is bound to, as the entry keeps it; never leaves SignInKit.
    package var storedProofKey: String?
    /// The proof `TokenRequest.proofFor` asked for, naming this token; nil for a bearer token.
    public package(set) var dpopProof: String?
    /// The API this access token is for alone (`TokenRequest.resource`), or nil: the grant's own token.
    public package(set) var resource: String?
    /// The audience this access token was exchanged for (`TokenRequest.audience` of an access token), or nil.
    public package(set) var audience: String?
    /// For a token asked for `resource`: the provider evidently ignored the resource indicator (it answered the grant's
    /// own token again, or a JWT whose `aud` does not name the resource), so the token is not restricted to that API.
    /// `signin token` says so; a forwarded session restricted to the API is refused it.
    public package(set) var evidentlyUnrestricted: Bool = false

    /// Whom an answer is handed to: what its protocol can carry.
    public enum Consumer: Sendable, Equatable {
        /// A protocol that says the token's type beside it (`signin token --json`'s `token_type`, `exec`'s and a token
        /// file's `SIGNIN_TOKEN_TYPE`).
        case typed
        /// A protocol that carries only a bearer token, named for the refusal ("git (a password)", "kubectl (an
        /// ExecCredential)", "docker (a registry password)", "the metadata server").
        case bearerOnly(String)
    }

    /// The one rendering of an answer, whoever it is for: its type (`Bearer`, or `DPoP` for an access token bound
    /// to this machine's key) and its value. To a bearer-only consumer a bound token is `.unsupported`, saying so: handed
    /// out as a bearer one it is refused by every API that checks the binding, and useless to one that does not.
    public func presented(to consumer: Consumer) throws(SignInError) -> (type: String, value: String) {
        guard tokenType == "DPoP", case .bearerOnly(let name) = consumer else { return (tokenType, token.value) }
        throw .unsupported(reason: "\(name) can carry only a bearer token, and this access token is bound to signin's DPoP key (RFC 9449: each request needs a proof). Use `signin exec` (SIGNIN_TOKEN_TYPE says DPoP) with `signin dpop-proof`, or set \"dpop\": \"never\" in the configuration and sign in again for bearer tokens")
    }

    /// The token for a consumer whose protocol can carry only a bearer token: `presented(to: .bearerOnly(consumer))`'s
    /// value.
    public func bearerValue(for consumer: String) throws(SignInError) -> String {
        try presented(to: .bearerOnly(consumer)).value
    }

    /// A DPoP proof for one request with `method` to `url` presenting this token, or nil for a bearer token.
    public func dpopProof(method: String, url: String) throws(SignInError) -> String? {
        guard tokenType == "DPoP", let proofKey = try ProofKey.fromEntry(storedProofKey) else { return nil }
        return try DPoP.proof(proofKey, method: method, url: url, accessToken: token.value)
    }

    public init(token: SignInToken, kind: TokenKind, subject: String, name: String) {
        self.token = token
        self.kind = kind
        self.subject = subject
        self.name = name
    }
}
