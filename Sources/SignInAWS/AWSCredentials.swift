import SignInBase
import SignInProtocol
import SignInStorage
import SignInGrant
import FoundationEssentials

/// Temporary AWS credentials for a role, as STS `AssumeRoleWithWebIdentity` issues them. The secret key and the
/// session token are secrets: `description` leaves them out.
public struct AWSCredentials: Sendable, Equatable, CustomStringConvertible, DerivedCredential {
    public var accessKeyID: String
    /// Treat as a password.
    public var secretAccessKey: String
    /// Treat as a password.
    public var sessionToken: String
    public var expiration: Date
    /// The assumed role's session, `arn:aws:sts::ACCOUNT:assumed-role/ROLE/SESSION`, when STS said it.
    public var assumedRoleARN: String?

    public init(accessKeyID: String, secretAccessKey: String, sessionToken: String, expiration: Date, assumedRoleARN: String? = nil) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
        self.expiration = expiration
        self.assumedRoleARN = assumedRoleARN
    }

    public var description: String {
        "AWSCredentials(\(accessKeyID), \(assumedRoleARN ?? "role"), until \(expiration.formatted(.iso8601)))"
    }

    /// The form kept in the store's encrypted cache (one string, as a service account's token is kept).
    public var cachedValue: String {
        var o: [String: JSONValueOut] = ["AccessKeyId": .string(accessKeyID), "SecretAccessKey": .string(secretAccessKey), "SessionToken": .string(sessionToken)]
        if let assumedRoleARN { o["Arn"] = .string(assumedRoleARN) }
        return JSONValueOut.object(o).text
    }

    public var cachedExpiry: Date? { expiration }

    public init?(cachedValue: String, expiry expiration: Date) {
        guard let o = JSONValue.object(from: Data(cachedValue.utf8)), let id = o["AccessKeyId"]?.string, let secret = o["SecretAccessKey"]?.string,
              let session = o["SessionToken"]?.string else { return nil }
        self.init(accessKeyID: id, secretAccessKey: secret, sessionToken: session, expiration: expiration, assumedRoleARN: o["Arn"]?.string)
    }
}

/// What `SignInClient.awsCredentials(_:)` is asked: a role to assume with the signed-in person's ID token.
public struct AWSRoleRequest: Sendable, Equatable {
    /// The role, `arn:aws:iam::ACCOUNT:role/NAME` (any partition).
    public var roleARN: String
    /// The role session's name (CloudTrail shows it); nil: the person's e-mail, or their `sub`, as STS allows it.
    public var sessionName: String?
    /// How long the credentials last: 15 minutes to 12 hours, within the role's maximum session duration.
    public var duration: Duration
    /// Cached credentials are handed out while they stay valid this much longer; newer ones are asked for otherwise.
    /// nil: a quarter of `duration`, at most 15 minutes (the AWS SDKs ask again from 15 minutes before expiry).
    public var minimumValidity: Duration?
    /// Ask STS even when cached credentials are fresh enough.
    public var forceRefresh: Bool
    /// The account (an e-mail or `sub`); nil for the current one.
    public var account: String?

    public init(roleARN: String, sessionName: String? = nil, duration: Duration = .seconds(3600), minimumValidity: Duration? = nil,
                forceRefresh: Bool = false, account: String? = nil) {
        self.roleARN = roleARN
        self.sessionName = sessionName
        self.duration = duration
        self.minimumValidity = minimumValidity
        self.forceRefresh = forceRefresh
        self.account = account
    }

    /// The validity cached credentials must still have.
    public var effectiveMinimumValidity: Duration { minimumValidity ?? min(.seconds(900), duration / 4) }

    /// What is wrong with this request as STS would refuse it, before any network: nil when nothing is.
    public var problem: String? {
        if !AWSRoleRequest.isRoleARN(roleARN) { return "\"\(roleARN)\" is not a role ARN (arn:aws:iam::123456789012:role/NAME)" }
        if let s = sessionName, !AWSRoleRequest.isSessionName(s) { return "\"\(s)\" is not a role session name (2 to 64 of letters, digits and +=,.@_-)" }
        let seconds = duration.components.seconds
        if !(900...43_200).contains(seconds) { return "a role session lasts from 15 minutes to 12 hours (900 to 43200 seconds), not \(seconds) s" }
        return nil
    }

    /// `arn:PARTITION:iam::ACCOUNT:role/PATH/NAME`.
    public static func isRoleARN(_ s: String) -> Bool {
        let parts = s.split(separator: ":", maxSplits: 5, omittingEmptySubsequences: false)
        guard s.count <= 2048, parts.count == 6, parts[0] == "arn", parts[1].hasPrefix("aws"), parts[2] == "iam", parts[3].isEmpty,
              parts[4].count == 12, parts[4].allSatisfy({ $0.isASCII && $0.isNumber }), parts[5].hasPrefix("role/"), parts[5].count > 5 else { return false }
        return parts[5].allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "+=,.@_-/".contains($0)) }
    }

    /// STS's rule for `RoleSessionName`: `[\w+=,.@-]{2,64}`.
    public static func isSessionName(_ s: String) -> Bool {
        (2...64).contains(s.count) && s.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "+=,.@_-".contains($0)) }
    }

    /// A session name made from `name` (an e-mail or a `sub`): the characters STS refuses become `-`, cut to 64.
    public static func sessionName(from name: String) -> String {
        let mapped = String(name.map { $0.isASCII && ($0.isLetter || $0.isNumber || "+=,.@_-".contains($0)) ? $0 : "-" }.prefix(64))
        return mapped.count >= 2 ? mapped : "signin-" + mapped
    }
}
