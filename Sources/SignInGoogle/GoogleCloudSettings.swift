import SignInBase
import SignInProtocol
import SignInGrant

/// Google's section of the configuration: the project the metadata server names, the service account to
/// impersonate, federation, Google's API endpoints, and the Workspace domain a sign-in is restricted to
/// (`hosted_domain`, which adds `hd` to the authorization request and checks it in the ID token). Read here only;
/// `SignInConfiguration`'s Google properties (`impersonateServiceAccount`, `googleFederation`, `hostedDomain`, ...)
/// are views of it. It also brings Google's provider rules (`GoogleProvider`) to every configuration.
public struct GoogleCloudSettings: ConfigurationSection {
    public static let keys = ["project_id", "project_number", "impersonate_service_account", "iam_credentials_endpoint", "resource_manager_endpoint",
                              "google_federation_audience", "workforce_pool_user_project", "google_sts_endpoint", "hosted_domain"]

    /// `project_id`.
    public var projectID: String?
    /// `project_number`.
    public var projectNumber: String?
    /// `impersonate_service_account`: the last e-mail is the target, any before it a delegation chain.
    public var impersonateServiceAccount: [String] = []
    /// `iam_credentials_endpoint`.
    public var iamCredentialsEndpoint = "https://iamcredentials.googleapis.com"
    /// `resource_manager_endpoint`.
    public var resourceManagerEndpoint = "https://cloudresourcemanager.googleapis.com"
    /// `google_federation_audience` with `workforce_pool_user_project` and `google_sts_endpoint`.
    public var federation: WorkloadIdentityFederation?
    /// `google_sts_endpoint`.
    public var stsEndpoint = WorkloadIdentityFederation.defaultSTSEndpoint
    /// `hosted_domain`: the Workspace domain a sign-in is restricted to (Google's `hd`).
    public var hostedDomain: String?

    public init() {}

    public init(from fields: ConfigurationFields) throws(SignInError) {
        projectID = try fields.string("project_id")
        if let id = projectID, !ServiceAccounts.isProjectID(id) {
            throw fields.fail("project_id", "\"\(id)\" is not a project ID (6 to 30 lowercase letters, digits and hyphens, starting with a letter)")
        }
        if let v = fields["project_number"] {
            let text: String? = v.string ?? (v.int.map { String($0) })
            guard let n = text, !n.isEmpty, n.count <= 20, n.allSatisfy({ $0.isASCII && $0.isNumber }) else { throw fields.fail("project_number", "must be the project's number (digits)") }
            projectNumber = n
        }
        if let v = fields["impersonate_service_account"] {
            let items: [String]
            if let s = v.string {
                items = s.split(separator: ",").map { $0.trimmingWhitespace }
            } else if let a = v.array {
                items = a.compactMap(\.string)
                guard items.count == a.count else { throw fields.fail("impersonate_service_account", "must be an e-mail or a list of e-mails") }
            } else {
                throw fields.fail("impersonate_service_account", "must be a service account's e-mail, or a comma-separated delegation chain")
            }
            if let bad = items.first(where: { !ServiceAccounts.isEmail($0) }) {
                throw fields.fail("impersonate_service_account", "\"\(bad)\" is not a service account's e-mail (NAME@PROJECT.iam.gserviceaccount.com)")
            }
            impersonateServiceAccount = items
        }
        if let u = try fields.url("iam_credentials_endpoint") { iamCredentialsEndpoint = u }
        if let u = try fields.url("resource_manager_endpoint") { resourceManagerEndpoint = u }
        let sts = try fields.url("google_sts_endpoint")
        let userProject = try fields.string("workforce_pool_user_project")
        if let audience = try fields.string("google_federation_audience") {
            guard WorkloadIdentityFederation.isAudience(audience) else {
                throw fields.fail("google_federation_audience", "\"\(audience)\" is not a pool provider (//iam.googleapis.com/projects/NUMBER/locations/global/workloadIdentityPools/POOL/providers/PROVIDER, or .../workforcePools/POOL/providers/PROVIDER)")
            }
            let f = WorkloadIdentityFederation(audience: audience, userProject: userProject, stsEndpoint: sts ?? WorkloadIdentityFederation.defaultSTSEndpoint)
            if f.isWorkforce && userProject == nil { throw fields.fail("workforce_pool_user_project", "a workforce pool needs the project that pays for its use (its ID or number)") }
            federation = f
        } else if userProject != nil {
            throw fields.fail("workforce_pool_user_project", "only means something with google_federation_audience (the pool provider)")
        }
        if let sts { stsEndpoint = sts }
        hostedDomain = try fields.string("hosted_domain")
    }

    /// Google's `hd`: the account chooser shows only the Workspace domain's accounts.
    public var authorizationParameters: [(String, String)] { hostedDomain.map { [("hd", $0)] } ?? [] }

    /// The ID token must name the Workspace domain in `hd`: the parameter only filters the chooser.
    public func idTokenProblem(_ claims: [String: JSONValue]) -> String? {
        guard let hostedDomain, claims["hd"]?.string != hostedDomain else { return nil }
        return "account is not in the hosted domain \"\(hostedDomain)\""
    }

    /// A sign-in stored before `hosted_domain` was set (or under another value) serves no longer: its verified `hd`
    /// must be the domain.
    public func storedProfileProblem(_ profile: SignInProfile) -> String? {
        guard let hostedDomain, profile.hostedDomain != hostedDomain else { return nil }
        return "the stored account \((profile.email ?? profile.userID).withoutControlCharacters) is not in the hosted domain \"\(hostedDomain)\" the configuration now requires; sign in again with an account of that domain (signin login)"
    }
}

/// What signin checks of Google Cloud names before they go into a URL: a service account's e-mail and a project ID.
public enum ServiceAccounts {
    /// `NAME@DOMAIN` with letters, digits, `-`, `_` and `.` only, and a dot in the domain
    /// (`deployer@my-project.iam.gserviceaccount.com`).
    public static func isEmail(_ s: String) -> Bool { TokenRequest.isServiceAccountName(s) }

    /// A Google Cloud project ID: 6 to 30 lowercase letters, digits and hyphens, starting with a letter
    /// (older projects may also hold a domain prefix, `example.com:project`).
    public static func isProjectID(_ s: String) -> Bool {
        let id = s.split(separator: ":").last.map(String.init) ?? s
        guard (6...30).contains(id.count), let first = id.first, first.isLetter, first.isLowercase else { return false }
        return s.allSatisfy { $0.isASCII && (($0.isLetter && $0.isLowercase) || $0.isNumber || "-.:".contains($0)) }
    }
}

extension SignInConfiguration {
    /// Restricts Google sign-in to a Workspace domain (`hosted_domain`, Google's `hd`); the ID token's `hd` claim
    /// must match.
    public var hostedDomain: String? {
        get { googleCloud.hostedDomain }
        set { googleCloud.hostedDomain = newValue }
    }
    /// Google Cloud's section.
    public var googleCloud: GoogleCloudSettings {
        get { sections[GoogleCloudSettings.self] }
        set { sections[GoogleCloudSettings.self] = newValue }
    }
    /// The Google Cloud project the metadata server names (`project_id`), for gcloud and the client libraries.
    public var projectID: String? {
        get { googleCloud.projectID }
        set { googleCloud.projectID = newValue }
    }
    /// The project's number (`project_number`); looked up through the Cloud Resource Manager API when only the ID
    /// is given. gcloud decides it runs "on GCE" from this number.
    public var projectNumber: String? {
        get { googleCloud.projectNumber }
        set { googleCloud.projectNumber = newValue }
    }
    /// The service account whose tokens `token`, `id-token`, `exec`, the metadata server and the docker helper hand
    /// out instead of the person's (`impersonate_service_account`): the last e-mail is the target, any before it a
    /// delegation chain, as `gcloud --impersonate-service-account` takes them. Empty: the person's own tokens.
    public var impersonateServiceAccount: [String] {
        get { googleCloud.impersonateServiceAccount }
        set { googleCloud.impersonateServiceAccount = newValue }
    }
    /// The IAM Service Account Credentials API (`iam_credentials_endpoint`), default Google's.
    public var iamCredentialsEndpoint: String {
        get { googleCloud.iamCredentialsEndpoint }
        set { googleCloud.iamCredentialsEndpoint = newValue }
    }
    /// The Cloud Resource Manager API (`resource_manager_endpoint`), default Google's.
    public var resourceManagerEndpoint: String {
        get { googleCloud.resourceManagerEndpoint }
        set { googleCloud.resourceManagerEndpoint = newValue }
    }
    /// Google Cloud through workload or workforce identity federation (`google_federation_audience`,
    /// `workforce_pool_user_project`, `google_sts_endpoint`): the metadata server's tokens are then bought at
    /// Google's STS with the person's ID token. nil: no federation.
    public var googleFederation: WorkloadIdentityFederation? {
        get { googleCloud.federation }
        set { googleCloud.federation = newValue }
    }
    /// Google's STS token endpoint (`google_sts_endpoint`), for federation and the `external_account` files
    /// `signin google external-account` writes.
    public var googleSTSEndpoint: String {
        get { googleCloud.stsEndpoint }
        set { googleCloud.stsEndpoint = newValue }
    }
}
