/// The package version, shown by `signin --version` and sent as the User-Agent.
public enum SignInKitVersion {
    /// Semantic version of SignInKit and the `signin` command.
    public static let string = "0.2.0"
}
