import SignInBase
import SignInTransport

/// Which client at which provider: the issuer and the client ID that credentials belong to, as one value (a
/// `CredentialStorage` keeps each pair's accounts apart).
public struct ClientIdentity: Sendable, Hashable, CustomStringConvertible {
    /// The provider's issuer identifier.
    public let issuer: String
    /// The OAuth client ID at that provider.
    public let clientID: String

    public init(issuer: String, clientID: String) {
        self.issuer = issuer
        self.clientID = clientID
    }

    /// "client CLIENT at ISSUER".
    public var description: String { "client \(clientID) at \(issuer)" }
}

extension SignInConfiguration {
    /// This configuration's client at its provider.
    public var identity: ClientIdentity { ClientIdentity(issuer: issuer, clientID: clientID) }
}
