import SignInAWS
import SignInGoogle

extension SignInClient {
    /// The default scope of a service account's access token (what gcloud asks for).
    @available(*, deprecated, renamed: "GoogleCloudFamily.cloudPlatformScope")
    public static let cloudPlatformScope = GoogleCloudFamily.cloudPlatformScope
}

extension AgentProtocol.Hello {
    /// The STS a forwarded session's `aws-credential-process` asks.
    @available(*, deprecated, message: "use familySettings[AWSFamily.stsEndpointSetting]")
    public var awsSTSEndpoint: String? {
        get { familySettings[AWSFamily.stsEndpointSetting] }
        set { familySettings[AWSFamily.stsEndpointSetting] = newValue }
    }

    /// Google's STS, for a forwarded session's `external_account` files.
    @available(*, deprecated, message: "use familySettings[GoogleCloudFamily.stsEndpointSetting]")
    public var googleSTSEndpoint: String? {
        get { familySettings[GoogleCloudFamily.stsEndpointSetting] }
        set { familySettings[GoogleCloudFamily.stsEndpointSetting] = newValue }
    }

    /// The IAM Credentials API, for a forwarded session's `external_account` files.
    @available(*, deprecated, message: "use familySettings[GoogleCloudFamily.iamCredentialsEndpointSetting]")
    public var iamCredentialsEndpoint: String? {
        get { familySettings[GoogleCloudFamily.iamCredentialsEndpointSetting] }
        set { familySettings[GoogleCloudFamily.iamCredentialsEndpointSetting] = newValue }
    }

    /// A hello with the families' endpoints named one by one.
    @available(*, deprecated, message: "use init(protocolVersion:signinVersion:session:store:gitHosts:dockerRegistries:familySettings:)")
    public init(protocolVersion: Int = AgentProtocol.version, signinVersion: String? = nil, session: AgentProtocol.SessionInfo? = nil, store: String? = nil,
                gitHosts: [String] = [], dockerRegistries: [String] = [], awsSTSEndpoint: String?, googleSTSEndpoint: String?,
                iamCredentialsEndpoint: String?) {
        var settings: [String: String] = [:]
        settings[AWSFamily.stsEndpointSetting] = awsSTSEndpoint
        settings[GoogleCloudFamily.stsEndpointSetting] = googleSTSEndpoint
        settings[GoogleCloudFamily.iamCredentialsEndpointSetting] = iamCredentialsEndpoint
        self.init(protocolVersion: protocolVersion, signinVersion: signinVersion, session: session, store: store, gitHosts: gitHosts,
                  dockerRegistries: dockerRegistries, familySettings: settings)
    }
}

extension AgentProtocol.Key {
    @available(*, deprecated, renamed: "AWSFamily.stsEndpointSetting")
    public static let awsSTSEndpoint = AWSFamily.stsEndpointSetting
    @available(*, deprecated, renamed: "GoogleCloudFamily.stsEndpointSetting")
    public static let googleSTSEndpoint = GoogleCloudFamily.stsEndpointSetting
    @available(*, deprecated, renamed: "GoogleCloudFamily.iamCredentialsEndpointSetting")
    public static let iamCredentialsEndpoint = GoogleCloudFamily.iamCredentialsEndpointSetting
}
