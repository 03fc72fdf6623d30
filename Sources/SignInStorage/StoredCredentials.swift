import SignInBase
import SignInProtocol
import FoundationEssentials

/// What is kept between runs for one account of one client at one provider. `CredentialStore` keeps it
/// encrypted; a `CredentialStorage` of a program's own must keep it as secret as a password (`Codable` for that).
public struct StoredCredentials: Codable, Sendable, Equatable, CustomStringConvertible {
    /// The provider (issuer identifier).
    public var issuer: String
    /// The OAuth client.
    public var clientID: String
    /// The long-lived grant, when the provider gave one.
    public var refreshToken: String?
    /// The last access token.
    public var accessToken: String?
    /// When `accessToken` expires, if the provider said.
    public var accessTokenExpiry: Date?
    /// The last verified ID token.
    public var idToken: String?
    /// When `idToken` expires.
    public var idTokenExpiry: Date?
    /// Who it is; `profile.userID` (`sub`) names the account.
    public var profile: SignInProfile
    /// The scopes granted.
    public var grantedScopes: [String]
    /// The provider's endpoints at sign-in, so a refresh needs no discovery.
    public var endpoints: ProviderEndpoints
    /// When this was saved.
    public var savedAt: Date
    /// When the provider refused the stored grant (`invalid_grant` on a refresh). Kept, not deleted: the person
    /// learns what happened, and nothing is lost until they sign in again or out.
    public var grantEndedAt: Date?
    /// Tokens this account's grant bought (its tokens for one API, a service account's, an AWS role's keys), kept
    /// encrypted with the rest until they expire, so that asking again needs no network. Each is found by its
    /// `DerivedTokenKey` (`derivedToken(_:)`); the store keeps them under `serviceAccountTokens`, their first name.
    public var derivedTokens: [DerivedToken]?
    /// The old name of `derivedTokens`.
    @available(*, deprecated, renamed: "derivedTokens")
    public var serviceAccountTokens: [DerivedToken]? {
        get { derivedTokens }
        set { derivedTokens = newValue }
    }
    /// When a program was told by an API that `accessToken` is no longer valid (`markAccessTokenRejected`); the
    /// next restore refreshes. Nil once a refresh replaced it.
    public var accessTokenRejectedAt: Date?
    /// The private key the grant is bound to with DPoP (RFC 9449), as base64 DER (SEC1), or, for a key made inside
    /// the TPM, `tpm:` and the TPM's wrapped blob (usable on that TPM only); nil for a bearer grant. Kept as secret
    /// as the refresh token, never shown: callers get proofs made with it.
    public var dpopKey: String?
    /// `DPoP` when `accessToken` must be presented with a proof of `dpopKey` (`Authorization: DPoP`); nil means
    /// `Bearer`.
    public var accessTokenType: String?
    /// How long `accessToken` was issued for by its refresh (the provider's `expires_in`, in seconds), when it said;
    /// nil after a sign-in. A refreshed token whose whole life is shorter than the default minimum validity (a
    /// minute) is fresh for the first half of it, so a short-lived token is not refreshed on every call.
    public var accessTokenLifetime: Double?
    /// Where `profile` came from when the server gave no ID token: `userinfo` (its profile endpoint), or `none` (the
    /// server tells who signed in nowhere: the account is named by the API or the server). Nil: a verified ID token.
    public var identitySource: String?

    enum CodingKeys: String, CodingKey {
        case issuer, clientID, refreshToken, accessToken, accessTokenExpiry, idToken, idTokenExpiry, profile, grantedScopes, endpoints, savedAt
        case grantEndedAt, accessTokenRejectedAt, dpopKey, accessTokenType, accessTokenLifetime, identitySource
        // The cache's first name, which stores keep.
        case derivedTokens = "serviceAccountTokens"
    }

    /// The old name of `DerivedToken`.
    @available(*, deprecated, renamed: "DerivedToken")
    public typealias ServiceAccountToken = DerivedToken

    /// A token the grant bought, as the entry caches it.
    public struct DerivedToken: Codable, Sendable, Equatable {
        /// What it was got for: a `DerivedTokenKey`'s `encoded` form.
        public var key: String
        /// The token. Treat it as a password.
        public var value: String
        /// When it expires.
        public var expiry: Date
        /// `true` when a token asked for one API (a resource or an audience) is evidently not restricted to it: the
        /// provider answered the grant's own token again, or a JWT whose `aud` does not name the API (a provider that
        /// ignores RFC 8707). Such a token is never handed to a session restricted to that API. Nil: nothing says so.
        public var unrestricted: Bool?
        /// When it was got (nil: kept by a version that did not say): with `expiry`, its lifetime.
        public var obtained: Date?

        package init(key: String, value: String, expiry: Date, unrestricted: Bool? = nil, obtained: Date? = nil) {
            self.key = key
            self.value = value
            self.expiry = expiry
            self.unrestricted = unrestricted
            self.obtained = obtained
        }

        /// Whether it still has `margin` to live at `now`; a token whose whole life is no longer than a margin of a
        /// minute or less (a 30 s token asked for the usual minute) is fresh for its first half instead, or every use
        /// would get a new one.
        package func isFresh(at now: Date, margin: TimeInterval) -> Bool {
            let left = expiry.timeIntervalSince(now)
            return StoredCredentials.freshForHalfItsLife(left: left, lifetime: obtained.map { expiry.timeIntervalSince($0) }, margin: margin) ?? (left > margin)
        }
    }

    /// The largest margin the short-lived rule below applies to: a longer one is asked on purpose (`--min-ttl 3600`)
    /// and honoured as asked.
    package static let shortLivedMargin: TimeInterval = 60

    /// The rule for a token that never lives the margin asked (a 30 s token asked for the usual minute): fresh for the
    /// first half of its life, or every use would get a new one (and two consumers each hold a different one). Nil
    /// where the rule does not apply (its lifetime unknown or longer than the margin, or a margin asked on purpose).
    package static func freshForHalfItsLife(left: TimeInterval, lifetime: TimeInterval?, margin: TimeInterval) -> Bool? {
        guard let lifetime, lifetime > 0, lifetime <= margin, margin <= shortLivedMargin else { return nil }
        return left >= lifetime / 2
    }

    /// Credentials as a program's own storage or a test builds them.
    public init(issuer: String, clientID: String, refreshToken: String?, accessToken: String?, accessTokenExpiry: Date?,
                idToken: String?, idTokenExpiry: Date?, profile: SignInProfile, grantedScopes: [String], endpoints: ProviderEndpoints,
                savedAt: Date = Date(), grantEndedAt: Date? = nil) {
        self.issuer = issuer
        self.clientID = clientID
        self.refreshToken = refreshToken
        self.accessToken = accessToken
        self.accessTokenExpiry = accessTokenExpiry
        self.idToken = idToken
        self.idTokenExpiry = idTokenExpiry
        self.profile = profile
        self.grantedScopes = grantedScopes
        self.endpoints = endpoints
        self.savedAt = savedAt
        self.grantEndedAt = grantEndedAt
    }

    /// Never the tokens themselves.
    public var description: String {
        "StoredCredentials(\(issuer), sub \(profile.userID), refresh token: \(refreshToken == nil ? "no" : "yes")\(dpopKey == nil ? "" : ", DPoP-bound"), access token until \(accessTokenExpiry.map { "\($0)" } ?? "?"))"
    }
}

// The one codec of an entry's plaintext (what an entry file holds encrypted, and the kernel holds decrypted beside an
// unlocked key): written by `entryJSON` and read by `init?(json:)`, both here. Its members and their names are
// `StoredCredentials`' `Codable` ones (dates as seconds since 1970, no member for nil), so an entry written by an
// earlier signin with `JSONEncoder` reads unchanged, and a program's own storage may keep the same form through
// `Codable`. Both sides are written by hand: the cached path decodes an entry on every `signin token`, and
// Foundation's generic coding cost more than the rest of it.

extension StoredCredentials {
    /// The entry's plaintext: JSON, keys sorted.
    package func entryPlaintext() throws(SignInError) -> [UInt8] {
        guard let json = entryJSON else { throw .system(reason: "could not encode credentials (a date that is not a finite number)") }
        return Array(JSONValueOut.object(json).text.utf8)
    }

    /// The entry's members, as `init?(json:)` reads them; nil when a date is not a finite number.
    package var entryJSON: [String: JSONValueOut]? {
        var ok = true
        func date(_ d: Date) -> JSONValueOut {
            let seconds = d.timeIntervalSince1970
            guard seconds.isFinite else { ok = false; return .null }
            return .raw("\(seconds)")
        }
        var o: [String: JSONValueOut] = [:]
        func put(_ key: String, _ value: JSONValueOut?) { if let value { o[key] = value } }
        put("issuer", .string(issuer))
        put("clientID", .string(clientID))
        put("refreshToken", refreshToken.map { .string($0) })
        put("accessToken", accessToken.map { .string($0) })
        put("accessTokenExpiry", accessTokenExpiry.map(date))
        put("idToken", idToken.map { .string($0) })
        put("idTokenExpiry", idTokenExpiry.map(date))
        var p: [String: JSONValueOut] = ["userID": .string(profile.userID)]
        p["name"] = profile.name.map { .string($0) }
        p["givenName"] = profile.givenName.map { .string($0) }
        p["familyName"] = profile.familyName.map { .string($0) }
        p["email"] = profile.email.map { .string($0) }
        p["emailVerified"] = profile.emailVerified.map { .bool($0) }
        p["pictureURL"] = profile.picture.map { .string($0) }
        p["hostedDomain"] = profile.hostedDomain.map { .string($0) }
        put("profile", .object(p))
        put("grantedScopes", .strings(grantedScopes))
        var e: [String: JSONValueOut] = ["issuer": .string(endpoints.issuer), "authorization": .string(endpoints.authorization),
                                         "token": .string(endpoints.token), "jwks": .string(endpoints.jwks)]
        e["revocation"] = endpoints.revocation.map { .string($0) }
        e["userinfo"] = endpoints.userinfo.map { .string($0) }
        e["deviceAuthorization"] = endpoints.deviceAuthorization.map { .string($0) }
        e["issuerParameterSupported"] = endpoints.issuerParameterSupported.map { .bool($0) }
        e["tokenEndpointAuthMethods"] = endpoints.tokenEndpointAuthMethods.map { .strings($0) }
        e["grantTypesSupported"] = endpoints.grantTypesSupported.map { .strings($0) }
        put("endpoints", .object(e))
        put("savedAt", date(savedAt))
        put("grantEndedAt", grantEndedAt.map(date))
        put("serviceAccountTokens", derivedTokens.map { tokens in
            .array(tokens.map { t in
                var item: [String: JSONValueOut] = ["key": .string(t.key), "value": .string(t.value), "expiry": date(t.expiry)]
                item["unrestricted"] = t.unrestricted.map { .bool($0) }
                item["obtained"] = t.obtained.map(date)
                return .object(item)
            })
        })
        put("accessTokenRejectedAt", accessTokenRejectedAt.map(date))
        put("dpopKey", dpopKey.map { .string($0) })
        put("accessTokenType", accessTokenType.map { .string($0) })
        put("accessTokenLifetime", accessTokenLifetime.flatMap { $0.isFinite ? .raw("\($0)") : nil })
        put("identitySource", identitySource.map { .string($0) })
        return ok ? o : nil
    }

    /// Reads an entry's plaintext (`entryJSON`, or `JSONEncoder`'s form from an earlier signin or a program's own
    /// storage). Nil when a required member is missing or any member has the wrong type, as the decoder would refuse it.
    package init?(json o: [String: JSONValue]) {
        func string(_ v: JSONValue?) -> String?? {
            switch v {
            case nil, .null?: return .some(nil)
            case .string(let s)?: return .some(s)
            default: return nil
            }
        }
        func date(_ v: JSONValue?) -> Date?? {
            switch v {
            case nil, .null?: return .some(nil)
            case .number(let n)?: return .some(Date(timeIntervalSince1970: n))
            default: return nil
            }
        }
        func bool(_ v: JSONValue?) -> Bool?? {
            switch v {
            case nil, .null?: return .some(nil)
            case .bool(let b)?: return .some(b)
            default: return nil
            }
        }
        guard case .string(let issuer)? = o["issuer"], case .string(let clientID)? = o["clientID"],
              let refreshToken = string(o["refreshToken"]), let accessToken = string(o["accessToken"]),
              let accessTokenExpiry = date(o["accessTokenExpiry"]), let idToken = string(o["idToken"]),
              let idTokenExpiry = date(o["idTokenExpiry"]), case .number(let saved)? = o["savedAt"],
              let grantEndedAt = date(o["grantEndedAt"]),
              case .array(let scopeValues)? = o["grantedScopes"], case .object(let p)? = o["profile"], case .object(let e)? = o["endpoints"]
        else { return nil }
        var scopes: [String] = []
        for v in scopeValues {
            guard case .string(let s) = v else { return nil }
            scopes.append(s)
        }
        guard case .string(let userID)? = p["userID"], let name = string(p["name"]), let givenName = string(p["givenName"]),
              let familyName = string(p["familyName"]), let email = string(p["email"]), let emailVerified = bool(p["emailVerified"]),
              let picture = string(p["pictureURL"]), let hostedDomain = string(p["hostedDomain"]) else { return nil }
        var derivedTokens: [DerivedToken]?
        if case .array(let items)? = o["serviceAccountTokens"] {
            derivedTokens = items.compactMap { item in
                guard case .object(let t) = item, case .string(let key)? = t["key"], case .string(let value)? = t["value"],
                      case .number(let expiry)? = t["expiry"] else { return nil }
                var unrestricted: Bool?
                if case .bool(let b)? = t["unrestricted"] { unrestricted = b }
                var obtained: Date?
                if case .number(let o)? = t["obtained"] { obtained = Date(timeIntervalSince1970: o) }
                return DerivedToken(key: key, value: value, expiry: Date(timeIntervalSince1970: expiry), unrestricted: unrestricted, obtained: obtained)
            }
        }
        guard case .string(let endpointIssuer)? = e["issuer"], case .string(let authorization)? = e["authorization"],
              case .string(let token)? = e["token"], case .string(let jwks)? = e["jwks"], let revocation = string(e["revocation"]),
              let userinfo = string(e["userinfo"]), let device = string(e["deviceAuthorization"]),
              let issParameter = bool(e["issuerParameterSupported"]) else { return nil }
        self.init(issuer: issuer, clientID: clientID, refreshToken: refreshToken, accessToken: accessToken, accessTokenExpiry: accessTokenExpiry,
                  idToken: idToken, idTokenExpiry: idTokenExpiry,
                  profile: SignInProfile(userID: userID, name: name, givenName: givenName, familyName: familyName, email: email,
                                         emailVerified: emailVerified, picture: picture, hostedDomain: hostedDomain),
                  grantedScopes: scopes,
                  endpoints: ProviderEndpoints(issuer: endpointIssuer, authorization: authorization, token: token, jwks: jwks, revocation: revocation,
                                               userinfo: userinfo, deviceAuthorization: device, issuerParameterSupported: issParameter,
                                               tokenEndpointAuthMethods: e["tokenEndpointAuthMethods"]?.array.map { $0.compactMap(\.string) },
                                               grantTypesSupported: e["grantTypesSupported"]?.array.map { $0.compactMap(\.string) }),
                  savedAt: Date(timeIntervalSince1970: saved), grantEndedAt: grantEndedAt)
        self.derivedTokens = derivedTokens
        guard let rejectedAt = date(o["accessTokenRejectedAt"]), let dpopKey = string(o["dpopKey"]), let tokenType = string(o["accessTokenType"]) else { return nil }
        self.accessTokenRejectedAt = rejectedAt
        self.dpopKey = dpopKey
        self.accessTokenType = tokenType
        if case .number(let lifetime)? = o["accessTokenLifetime"] { self.accessTokenLifetime = lifetime }
        if case .string(let source)? = o["identitySource"] { self.identitySource = source }
    }
}

extension StoredCredentials {
    /// The DPoP key of the grant; nil for a bearer grant; a key that does not parse is an error.
    package func proofKey() throws(SignInError) -> ProofKey? { try ProofKey.fromEntry(dpopKey) }
}

extension StoredCredentials {
    /// The client at the provider these credentials belong to.
    public var identity: ClientIdentity { ClientIdentity(issuer: issuer, clientID: clientID) }
}
