import SignInBase
import SignInTransport

/// Which client at which provider: the issuer and the client ID that credentials belong to, as one value (a
/// `CredentialStorage` keeps each pair's accounts apart), and how the client is known there.
public struct ClientIdentity: Sendable, Hashable, CustomStringConvertible {
    /// The provider's issuer identifier.
    public let issuer: String
    /// The OAuth client ID at that provider.
    public let clientID: String
    /// How the server knows the client. Not part of which client it is: two identities of one issuer and client ID are
    /// equal, whatever each says of how.
    public var kind: Kind = .configured

    /// How a client is known at its server.
    public enum Kind: String, Sendable, Hashable {
        /// Registered by hand at the provider and named in the configuration (`client_id`).
        case configured
        /// Registered by signin itself (RFC 7591 dynamic client registration), kept in the store.
        case registered
        /// Its client ID is the https URL of a client ID metadata document the server fetches
        /// (draft-ietf-oauth-client-id-metadata-document).
        case metadataDocument = "metadata-document"
    }

    public init(issuer: String, clientID: String, kind: Kind = .configured) {
        self.issuer = issuer
        self.clientID = clientID
        self.kind = kind
    }

    public static func == (a: ClientIdentity, b: ClientIdentity) -> Bool { a.issuer == b.issuer && a.clientID == b.clientID }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(issuer)
        hasher.combine(clientID)
    }

    /// "client CLIENT at ISSUER".
    public var description: String { "client \(clientID) at \(issuer)" }
}
