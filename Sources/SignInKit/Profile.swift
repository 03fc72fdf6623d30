/// Who signed in, from the ID token's claims (and the userinfo endpoint where the token lacks them).
public struct Profile: Codable, Sendable, Equatable {
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
    /// URL of the profile picture.
    public var pictureURL: String?
    /// Google Workspace domain (`hd`), when there is one.
    public var hostedDomain: String?

    /// A profile built in code.
    public init(userID: String, name: String? = nil, givenName: String? = nil, familyName: String? = nil, email: String? = nil,
                emailVerified: Bool? = nil, pictureURL: String? = nil, hostedDomain: String? = nil) {
        self.userID = userID
        self.name = name
        self.givenName = givenName
        self.familyName = familyName
        self.email = email
        self.emailVerified = emailVerified
        self.pictureURL = pictureURL
        self.hostedDomain = hostedDomain
    }

    /// `Alice Example <alice@example.org>`, or whatever of it is known.
    public var displayName: String {
        let n = name ?? [givenName, familyName].compactMap { $0 }.joined(separator: " ")
        switch (n.isEmpty ? nil : n, email) {
        case let (n?, e?): return "\(n) <\(e)>"
        case let (n?, nil): return n
        case let (nil, e?): return e
        default: return userID
        }
    }

    /// Fills fields the ID token lacked from a userinfo response, only for the same subject.
    mutating func merge(userinfo: [String: JSONValue]) {
        guard userinfo["sub"]?.string == userID else { return }
        name = name ?? userinfo["name"]?.string
        givenName = givenName ?? userinfo["given_name"]?.string
        familyName = familyName ?? userinfo["family_name"]?.string
        email = email ?? userinfo["email"]?.string
        emailVerified = emailVerified ?? userinfo["email_verified"]?.bool
        pictureURL = pictureURL ?? userinfo["picture"]?.string
    }

    var isMissingBasics: Bool { name == nil || email == nil }
}
