import SignInBase

/// The discovery documents fetched in this process, by issuer and overrides: every `SignInClient` of one
/// provider shares one discovery (a program that makes a client per request fetches the document once), and an API's
/// sign-in from its address hands the server's metadata, read once, to the client it makes.
package final class DiscoveryCache: Sendable {
    package static let shared = DiscoveryCache()
    private let entries = Locked<[Key: ProviderEndpoints]>([:])

    private struct Key: Hashable {
        let issuer: String
        let overrides: [String?]
    }

    private static func key(_ c: SignInConfiguration) -> Key {
        let e = c.endpoints
        return Key(issuer: c.issuer, overrides: [e.authorization, e.token, e.revocation, e.userinfo, e.jwks, e.deviceAuthorization])
    }

    package func endpoints(for c: SignInConfiguration) -> ProviderEndpoints? { entries.withLock { $0[Self.key(c)] } }

    package func store(_ e: ProviderEndpoints, for c: SignInConfiguration) { entries.withLock { $0[Self.key(c)] = e } }
}
