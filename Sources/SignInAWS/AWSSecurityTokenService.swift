import SignInBase
import SignInProtocol
import SignInStorage
import SignInTransport
import FoundationEssentials

/// AWS STS's `AssumeRoleWithWebIdentity` (API version 2011-06-15): an OpenID Connect ID token buys a role's
/// temporary credentials. The call is a form POST that needs no AWS signature; STS answers XML. The role's
/// trust policy must name the issuer's IAM OpenID Connect provider and this client ID as the audience.
public struct AWSSecurityTokenService: Sendable {
    /// The STS endpoint, as `aws_sts_endpoint` names it.
    public let endpoint: String
    let http: HTTPClient
    static let endpointName = "AWS STS"

    /// The endpoint a configuration names (`aws_sts_endpoint`, else the regional one of `aws_region`, else the
    /// global `https://sts.amazonaws.com`), with its HTTP settings.
    public init(configuration: SignInConfiguration) {
        endpoint = configuration.awsSTSEndpoint
        http = HTTPClient(configuration: configuration)
    }

    /// An endpoint of the caller's (a forwarded agent's user has no configuration here), with default settings:
    /// https, or http to this machine only, as every endpoint of signin's.
    public init(endpoint: String) throws(SignInError) {
        if let problem = EndpointURL.problem(endpoint) {
            throw .providerError(endpoint: Self.endpointName, code: "invalid_endpoint", detail: "the STS endpoint \(endpoint.withoutControlCharacters) \(problem)")
        }
        self.endpoint = endpoint
        http = HTTPClient(HTTPSettings())
    }

    /// Assumes `roleARN` with `idToken`. A refusal is a `.providerError` whose code is STS's (`AccessDenied`,
    /// `InvalidIdentityToken`, `ExpiredTokenException`, ...) and whose detail names the role and what to fix.
    public func assumeRole(_ roleARN: String, idToken: String, sessionName: String, duration: Duration) throws(SignInError) -> AWSCredentials {
        let form = [("Action", "AssumeRoleWithWebIdentity"), ("Version", "2011-06-15"), ("RoleArn", roleARN), ("RoleSessionName", sessionName),
                    ("DurationSeconds", String(duration.components.seconds)), ("WebIdentityToken", idToken)]
        return try Self.credentials(from: try http.postForm(endpoint, endpoint: Self.endpointName, form: form), role: roleARN)
    }

    /// STS's answer to `AssumeRoleWithWebIdentity` for `roleARN`: the credentials, or the refusal as an error.
    package static func credentials(from r: HTTPResponse, role roleARN: String) throws(SignInError) -> AWSCredentials {
        let xml = XMLElements(String(decoding: r.body, as: UTF8.self))
        guard r.status == 200 else { throw Self.failure(status: r.status, xml, role: roleARN) }
        guard let id = xml["AccessKeyId"], let secret = xml["SecretAccessKey"], let session = xml["SessionToken"],
              [id, secret, session].allSatisfy(TokenResponse.isTokenText), let expiry = xml["Expiration"].flatMap(RFC3339.date) else {
            throw .providerError(endpoint: Self.endpointName, code: "invalid_response",
                                 detail: "AssumeRoleWithWebIdentity for \(roleARN) answered without readable Credentials (AccessKeyId, SecretAccessKey, SessionToken, Expiration)")
        }
        return AWSCredentials(accessKeyID: id, secretAccessKey: secret, sessionToken: session, expiration: expiry, assumedRoleARN: xml["Arn"])
    }

    /// STS's `<ErrorResponse><Error><Code>` as an error that says what to fix. STS's message names no secret (it
    /// may quote the role and the token's issuer and audience, never the token).
    static func failure(status: Int, _ xml: XMLElements, role: String) -> SignInError {
        let code = xml["Code"] ?? "http_\(status)"
        let message = xml["Message"].map { ": " + String($0.prefix(300)).withoutControlCharacters } ?? ""
        let detail: String
        switch code {
        case "AccessDenied":
            detail = "the role \(role) cannot be assumed with this sign-in\(message). Its trust policy must allow sts:AssumeRoleWithWebIdentity for the IAM OpenID Connect provider of this issuer, with this client ID as the audience (the `aud` condition)"
        case "InvalidIdentityToken":
            detail = "STS did not accept the ID token for \(role)\(message). Register the issuer as an IAM OpenID Connect provider with this client ID as an audience"
        case "ExpiredTokenException":
            detail = "STS found the ID token expired for \(role)\(message); check this machine's clock"
        case "IDPCommunicationError", "IDPRejectedClaim":
            detail = "STS could not check the ID token with the provider for \(role)\(message)"
        case "ValidationError":
            detail = "STS refused the request for \(role)\(message)"
        default:
            detail = "AssumeRoleWithWebIdentity for \(role) failed (HTTP \(status))\(message)"
        }
        return .providerError(endpoint: endpointName, code: code, detail: detail)
    }
}

/// The text of an XML answer's leaf elements by name, first occurrence, entities decoded: enough for STS's flat,
/// fixed-shape answers without an XML library.
package struct XMLElements {
    let text: String
    package init(_ text: String) { self.text = String(text.prefix(1 << 20)) }

    package subscript(name: String) -> String? {
        guard let open = text.firstRange(of: "<\(name)>"), let close = text[open.upperBound...].firstRange(of: "</\(name)>") else { return nil }
        let raw = text[open.upperBound..<close.lowerBound]
        guard !raw.contains("<") else { return nil }
        return Self.decoded(String(raw)).trimmingWhitespace
    }

    static func decoded(_ s: String) -> String {
        guard s.contains("&") else { return s }
        var out = ""
        var rest = Substring(s)
        while let amp = rest.firstIndex(of: "&") {
            out += rest[..<amp]
            guard let semi = rest[amp...].firstIndex(of: ";"), rest.distance(from: amp, to: semi) <= 10 else { out += "&"; rest = rest[rest.index(after: amp)...]; continue }
            let entity = rest[rest.index(after: amp)..<semi]
            switch entity {
            case "amp": out += "&"
            case "lt": out += "<"
            case "gt": out += ">"
            case "quot": out += "\""
            case "apos": out += "'"
            default:
                let number = entity.hasPrefix("#x") ? UInt32(entity.dropFirst(2), radix: 16) : entity.hasPrefix("#") ? UInt32(entity.dropFirst()) : nil
                if let n = number, let scalar = Unicode.Scalar(n) { out.unicodeScalars.append(scalar) } else { out += "&" + entity + ";" }
            }
            rest = rest[rest.index(after: semi)...]
        }
        return out + rest
    }
}

extension AWSFamily {
    /// Reads `r` as STS's answer, as the fuzz target feeds it bytes: it must return, never crash or hang.
    package static func readAnswer(_ r: HTTPResponse) {
        _ = try? AWSSecurityTokenService.credentials(from: r, role: "arn:aws:iam::1:role/fuzz")
        _ = XMLElements(String(decoding: r.body, as: UTF8.self))["Expiration"].flatMap(RFC3339.date)
    }
}
