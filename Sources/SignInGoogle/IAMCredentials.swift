import SignInBase
import SignInProtocol
import SignInStorage
import SignInTransport
import FoundationEssentials

/// Google's IAM Service Account Credentials API (`iamcredentials.googleapis.com/v1`): a person's access token
/// buys a service account's short-lived access token (`generateAccessToken`) or ID token (`generateIdToken`),
/// as `gcloud --impersonate-service-account` does. The caller needs `roles/iam.serviceAccountTokenCreator` on
/// the target (or, along a delegation chain, on the first delegate; each delegate on the next).
struct IAMCredentialsClient {
    let base: String
    let http: HTTPClient
    static let endpointName = "IAM Service Account Credentials API"
    static let tokenCreatorRole = "roles/iam.serviceAccountTokenCreator"

    init(configuration: SignInConfiguration) {
        base = GoogleAPI.base(configuration.iamCredentialsEndpoint)
        http = HTTPClient(configuration: configuration)
    }

    /// The chain as the API takes it: the last e-mail is the target, those before it the delegates in order.
    struct Chain: Sendable, Equatable {
        let target: String
        let delegates: [String]
        init?(_ emails: [String]) {
            guard let last = emails.last else { return nil }
            target = last
            delegates = Array(emails.dropLast())
        }
        var description: String { (delegates + [target]).joined(separator: " → ") }
    }

    /// `generateAccessToken` for `chain` with `scopes`, valid for an hour (the API's default maximum).
    func generateAccessToken(_ chain: Chain, scopes: [String], bearer: String) throws(SignInError) -> SignInToken {
        let body = request(chain, ["scope": .strings(scopes), "lifetime": .string("3600s")])
        let o = try call(chain, method: "generateAccessToken", body: body, bearer: bearer)
        guard let token = o["accessToken"]?.string, !token.isEmpty, TokenResponse.isTokenText(token) else {
            throw .providerError(endpoint: Self.endpointName, code: "invalid_response", detail: "generateAccessToken answered without a usable accessToken (none, or characters a token may not contain)")
        }
        guard let expiry = o["expireTime"]?.string.flatMap(Self.rfc3339) else {
            throw .providerError(endpoint: Self.endpointName, code: "invalid_response", detail: "generateAccessToken answered without a readable expireTime")
        }
        return SignInToken(value: token, expirationDate: expiry)
    }

    /// `generateIdToken` for `chain` and `audience` (with the `email` claim when `includeEmail`).
    func generateIDToken(_ chain: Chain, audience: String, includeEmail: Bool, bearer: String) throws(SignInError) -> SignInToken {
        let body = request(chain, ["audience": .string(audience), "includeEmail": .bool(includeEmail)])
        let o = try call(chain, method: "generateIdToken", body: body, bearer: bearer)
        guard let token = o["token"]?.string, !token.isEmpty, TokenResponse.isTokenText(token) else {
            throw .providerError(endpoint: Self.endpointName, code: "invalid_response", detail: "generateIdToken answered without a usable token (none, or characters a token may not contain)")
        }
        // Its expiry is in the token itself (the API does not say it beside).
        return SignInToken(value: token, expirationDate: Self.expiry(ofJWT: token))
    }

    /// A request's body: `fields`, and the delegation chain when there is one.
    private func request(_ chain: Chain, _ fields: [String: JSONValueOut]) -> String {
        var o = fields
        if !chain.delegates.isEmpty { o["delegates"] = .strings(chain.delegates.map { "projects/-/serviceAccounts/" + $0 }) }
        return JSONValueOut.object(o).text
    }

    private func call(_ chain: Chain, method: String, body: String, bearer: String) throws(SignInError) -> [String: JSONValue] {
        let url = "\(base)/v1/projects/-/serviceAccounts/\(chain.target):\(method)"
        let r = try http.postJSON(url, endpoint: Self.endpointName, json: body, headers: ["Authorization: Bearer \(bearer)"])
        let o = JSONValue.object(from: r.body)
        guard r.status == 200, let o else { throw Self.failure(r, object: o, chain: chain, method: method) }
        return o
    }

    /// Google's error shape (`{"error": {"code", "status", "message"}}`) as a provider error that names the
    /// account and, for a refusal, the role that is missing.
    static func failure(_ r: HTTPResponse, object o: [String: JSONValue]?, chain: Chain, method: String) -> SignInError {
        let (status, message) = GoogleAPI.error(r, o)
        let who = chain.delegates.isEmpty ? chain.target : "\(chain.target) (through \(chain.delegates.joined(separator: ", ")))"
        switch r.status {
        case 401:
            return .providerError(endpoint: endpointName, code: status, detail: "the person's token was refused for \(method) of \(who)" + (message.map { ": \($0)" } ?? ""))
        case 403:
            return .providerError(endpoint: endpointName, code: status,
                                  detail: "not allowed to impersonate \(who): the signed-in account needs the role \(tokenCreatorRole) on it" + (message.map { " (\($0))" } ?? ""))
        case 404:
            return .providerError(endpoint: endpointName, code: status, detail: "no service account \(who)" + (message.map { " (\($0))" } ?? ""))
        default:
            return .providerError(endpoint: endpointName, code: status, detail: "\(method) of \(who) failed" + (message.map { ": \($0)" } ?? " (HTTP \(r.status))"))
        }
    }

    /// RFC 3339 as Google writes it (`2026-12-01T13:00:00Z`, maybe with fractional seconds or an offset).
    static func rfc3339(_ s: String) -> Date? { RFC3339.date(s) }

    /// The `exp` claim of a JWT, unverified (only to know when to ask again).
    static func expiry(ofJWT jwt: String) -> Date? {
        let parts = jwt.split(separator: ".")
        guard parts.count == 3, let payload = Base64URL.decode(String(parts[1])), let o = JSONValue.object(from: payload),
              let exp = o["exp"]?.int else { return nil }
        return Date(timeIntervalSince1970: Double(exp))
    }
}
