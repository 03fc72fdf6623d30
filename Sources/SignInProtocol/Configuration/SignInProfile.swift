import SignInBase
import SignInTransport
import FoundationEssentials

/// Who signed in, from the ID token's claims (and the userinfo endpoint where the token lacks them).
public struct SignInProfile: Codable, Sendable, Equatable {
    /// The provider's stable identifier for the account (`sub`).
    public var userID: String
    /// Full name.
    public var name: String?
    /// Given (first) name.
    public var givenName: String?
    /// Family (last) name.
    public var familyName: String?
    /// E-mail address.
    public var email: String?
    /// Whether the provider verified the e-mail address.
    public var emailVerified: Bool?
    /// The profile picture's address, as the provider gave it (`picture`).
    public var picture: String?
    /// Google Workspace domain (`hd`), when there is one.
    public var hostedDomain: String?

    // `picture` was stored as "pictureURL" from the start: entries keep that key.
    enum CodingKeys: String, CodingKey {
        case userID, name, givenName, familyName, email, emailVerified, picture = "pictureURL", hostedDomain
    }

    /// A profile built in code.
    public init(userID: String, name: String? = nil, givenName: String? = nil, familyName: String? = nil, email: String? = nil,
                emailVerified: Bool? = nil, picture: String? = nil, hostedDomain: String? = nil) {
        self.userID = userID
        self.name = name
        self.givenName = givenName
        self.familyName = familyName
        self.email = email
        self.emailVerified = emailVerified
        self.picture = picture
        self.hostedDomain = hostedDomain
    }

    /// The person's name alone, for a UI: `name`, else given and family name, else nil (see `displayName` for
    /// a line that always says who).
    public var fullName: String? {
        let n = name ?? [givenName, familyName].compactMap { $0 }.joined(separator: " ")
        return n.isEmpty ? nil : n.withoutControlCharacters
    }

    /// The profile picture as the provider gave it, when it is an https URL.
    public var pictureURL: URL? {
        guard let picture, picture.hasPrefix("https://"), !picture.unicodeScalars.contains(where: { $0.isControl }) else { return nil }
        return URL(string: picture)
    }

    /// A line that always says who, for logs and terminals: `Alice Example <alice@example.org>`, or whatever of it
    /// is known (the e-mail alone, the `sub` alone), without control characters (the provider chose these strings;
    /// printing them must not rewrite a terminal). For the name alone, use `fullName`.
    public var displayName: String { composedName.withoutControlCharacters }

    private var composedName: String {
        let n = name ?? [givenName, familyName].compactMap { $0 }.joined(separator: " ")
        switch (n.isEmpty ? nil : n, email) {
        case let (n?, e?): return "\(n) <\(e)>"
        case let (n?, nil): return n
        case let (nil, e?): return e
        default: return userID
        }
    }

    /// Fills the fields this profile lacks from `other` (an older profile of the same account, or userinfo).
    package mutating func fillMissing(from other: SignInProfile) {
        guard other.userID == userID else { return }
        name = name ?? other.name
        givenName = givenName ?? other.givenName
        familyName = familyName ?? other.familyName
        email = email ?? other.email
        emailVerified = emailVerified ?? other.emailVerified
        picture = picture ?? other.picture
        hostedDomain = hostedDomain ?? other.hostedDomain
    }

    /// The profile in an ID token that was verified elsewhere (a forwarded agent's, verified on the machine it
    /// runs on): read, not verified again here. nil when it is not a JWT with claims.
    package init?(forwardedIDToken raw: String) {
        guard let token = try? IDToken.decode(raw), !token.subject.isEmpty else { return nil }
        self.init(claims: token.claims)
    }

    /// A profile from OpenID claims (an ID token's or a userinfo response's).
    package init(claims: [String: JSONValue]) {
        self.init(userID: claims["sub"]?.string ?? "", name: claims["name"]?.string, givenName: claims["given_name"]?.string,
                  familyName: claims["family_name"]?.string, email: claims["email"]?.string,
                  emailVerified: claims["email_verified"]?.bool, picture: claims["picture"]?.string,
                  hostedDomain: claims["hd"]?.string)
    }

    package var isMissingBasics: Bool { name == nil || email == nil }

    /// A profile from a userinfo-like endpoint that is not OpenID's (a GitHub-style `/user`: `id` a number, `login`,
    /// `name`, `email`, `avatar_url`): `sub` when there is one, else `id`, else `login`. Nil when none names the person.
    package init?(profileEndpoint claims: [String: JSONValue]) {
        let id: String? = claims["sub"]?.string ?? claims["id"].flatMap { v -> String? in v.string ?? v.wholeNumber.map { String($0) } } ?? claims["login"]?.string
        guard let id, !id.isEmpty, id.utf8.count <= 1024 else { return nil }
        self.init(claims: claims)
        userID = id
        if name == nil { name = claims["login"]?.string }
        if picture == nil { picture = claims["avatar_url"]?.string }
    }
}
