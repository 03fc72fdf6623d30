import SignInGoogle

extension SignInClient {
    /// The default scope of a service account's access token (what gcloud asks for).
    @available(*, deprecated, renamed: "GoogleCloudFamily.cloudPlatformScope")
    public static let cloudPlatformScope = GoogleCloudFamily.cloudPlatformScope
}
