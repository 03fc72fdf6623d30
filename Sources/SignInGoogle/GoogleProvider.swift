import SignInBase
import SignInProtocol
import FoundationEssentials

/// Google as an OpenID provider (accounts.google.com): the rules the core takes for its issuer, and the default
/// issuer of a configuration that names none. The core knows no provider by name; this family's configuration
/// section brings them (`GoogleCloudSettings.provider(issuer:)`), so a program that composes SignInKit's families
/// signs in to Google by default, as GoogleSignIn does.
public enum GoogleProvider {
    /// Google's issuer.
    public static let issuer = "https://accounts.google.com"
    /// Google's registries: Artifact Registry (`LOCATION-docker.pkg.dev`) and Container Registry (`gcr.io`, `eu.gcr.io`...).
    public static let dockerRegistries = ["*-docker.pkg.dev", "gcr.io", "*.gcr.io"]
    /// Picture addresses that take a size suffix (`=s<N>-c`), and so can be asked for at a dimension.
    static let sizablePicturePrefixes = (3...6).map { "https://lh\($0).googleusercontent.com/" }

    /// Whether `issuer` is Google's, in any spelling Google uses (literal comparisons: every configuration read asks).
    public static func names(_ issuer: String) -> Bool {
        issuer == self.issuer || issuer == "accounts.google.com" || issuer == "https://accounts.google.com/"
    }

    /// Google's rules.
    package static let rules = ProviderRules(
        issuer: issuer,
        issuerAliases: ["accounts.google.com", "https://accounts.google.com/"],
        authorizationParameters: [("access_type", "offline"), ("include_granted_scopes", "true")],
        deviceAuthorizationEndpoint: "https://oauth2.googleapis.com/device/code",
        refreshTokenHint: "add \"prompt\": \"consent\" to extra_authorization_parameters",
        defaultGitHosts: ["source.developers.google.com", "*.googlesource.com"],
        defaultDockerRegistries: dockerRegistries,
        clientIDSuffix: ".apps.googleusercontent.com",
        endpointPrefixes: ["https://accounts.google.com/", "https://oauth2.googleapis.com/", "https://www.googleapis.com/"],
        placeholderClient: .init(clientID: "1234567890-abcdefghijklmnopqrstuvwxyz012345.apps.googleusercontent.com",
                                 advice: "Create a Desktop app OAuth client at https://console.cloud.google.com/apis/credentials (Create credentials > OAuth client ID > Desktop app) and put its client ID and secret here"),
        scopeAliases: ["https://www.googleapis.com/auth/userinfo.email": "email", "https://www.googleapis.com/auth/userinfo.profile": "profile"])
}

extension GoogleCloudSettings {
    /// Google's rules for Google's issuer.
    public static func provider(issuer: String) -> ProviderRules? { GoogleProvider.names(issuer) ? GoogleProvider.rules : nil }
    /// Google is the default provider.
    public static var defaultIssuer: String? { GoogleProvider.issuer }
}

extension SignInConfiguration {
    /// Google's issuer, the default (`GoogleProvider.issuer`).
    public static let googleIssuer = GoogleProvider.issuer
    /// True when the issuer is Google, whose ID tokens may name it without the scheme.
    public var isGoogle: Bool { GoogleProvider.names(issuer) }
}

extension DockerRegistries {
    /// Google's registries (`GoogleProvider.dockerRegistries`).
    public static let google = GoogleProvider.dockerRegistries
}

extension SignInProfile {
    /// The profile picture at about `dimension` pixels square, where the provider allows asking (Google's photo
    /// URLs take a size suffix, as GIDProfileData's `imageURL(withDimension:)`); else the picture as it is.
    /// Nil when there is no picture, or its address is not an https URL.
    public func imageURL(dimension: Int) -> URL? {
        guard let picture, picture.hasPrefix("https://"), !picture.unicodeScalars.contains(where: { $0.isControl }) else { return nil }
        guard GoogleProvider.sizablePicturePrefixes.contains(where: { picture.hasPrefix($0) }) else {
            return URL(string: picture)
        }
        let base = picture.firstIndex(of: "=").map { String(picture[..<$0]) } ?? picture
        return URL(string: base + "=s\(max(1, dimension))-c")
    }
}
