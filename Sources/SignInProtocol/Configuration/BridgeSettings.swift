import SignInBase

/// The bridges' section of the configuration: where `signin git-credential` and `signin docker-credential` may hand a
/// token (`git_hosts`, `docker_registries`), the user name git is given (`git_username`) and, for some git hosts, the
/// API whose token it gets (`git_resources`). Read here only; `SignInConfiguration.gitHosts` and the others are views
/// of it. Kept in the library, not the command line, because the agent forwards it: a session's hello tells the
/// remote side's bridges where they may answer (`AgentProtocol.Hello`), and a program that loads signin's file must
/// accept it.
public struct BridgeSettings: ConfigurationSection {
    public static let keys = ["git_username", "git_hosts", "git_resources", "docker_registries"]

    /// `git_username`: the user name `signin git-credential` answers; nil: the account's e-mail.
    public var gitUsername: String?
    /// `git_hosts`, lowercased; nil: the provider's default (`GitHosts.patterns(for:)`).
    public var gitHosts: [String]?
    /// `git_resources`: a host pattern (lowercased) to the resource indicator of the API git's token is for.
    public var gitResources: [String: String] = [:]
    /// `docker_registries`, lowercased; nil: the provider's default (`DockerRegistries.patterns(for:)`).
    public var dockerRegistries: [String]?

    public init() {}

    public init(from fields: ConfigurationFields) throws(SignInError) {
        gitUsername = try fields.string("git_username")
        gitHosts = try Self.patterns(fields, "git_hosts", of: "host", example: #"["git.example.com", "*.example.org", "127.0.0.1:8080"]"#,
                                     valid: GitHosts.isValidPattern)
        if let v = fields["git_resources"] {
            guard case .object(let items) = v else { throw fields.fail("git_resources", "must map host patterns to resources, such as {\"git.example.com\": \"https://git.example.com/\"}") }
            for (pattern, value) in items {
                guard GitHosts.isValidPattern(pattern) else { throw fields.fail("git_resources", "\"\(pattern.withoutControlCharacters)\" is not a host pattern (a host name, host:port, or *.domain)") }
                guard let r = value.string, SignInConfiguration.isValidResource(r) else {
                    throw fields.fail("git_resources", "the resource of \(pattern.withoutControlCharacters) is not a resource indicator (an absolute https URI without a fragment)")
                }
                gitResources[pattern.lowercased()] = r
            }
        }
        dockerRegistries = try Self.patterns(fields, "docker_registries", of: "registry", example: #"["europe-docker.pkg.dev", "*.gcr.io", "127.0.0.1:5000"]"#,
                                             valid: DockerRegistries.isValidPattern)
    }

    /// A list of `what` patterns (git's hosts, docker's registries), lowercased; nil when the field is missing.
    private static func patterns(_ fields: ConfigurationFields, _ key: String, of what: String, example: String,
                                 valid: (String) -> Bool) throws(SignInError) -> [String]? {
        guard let v = fields[key] else { return nil }
        guard case .array(let items) = v else { throw fields.fail(key, "must be a list of \(what) patterns, such as \(example)") }
        return try items.map { item throws(SignInError) -> String in
            guard let p = item.string, valid(p) else {
                throw fields.fail(key, "\(item.string.map { "\"\($0)\"" } ?? "each entry") is not a \(what) pattern (a host name, host:port, or *.domain)")
            }
            return p.lowercased()
        }
    }
}

extension SignInConfiguration {
    /// The bridges' section.
    public var bridges: BridgeSettings {
        get { sections[BridgeSettings.self] }
        set { sections[BridgeSettings.self] = newValue }
    }
    /// The user name `signin git-credential` answers (`git_username`; default: the account's e-mail).
    public var gitUsername: String? {
        get { bridges.gitUsername }
        set { bridges.gitUsername = newValue }
    }
    /// The hosts `signin git-credential get` answers (`git_hosts`): `host`, `host:port`, or `*.domain`. Nil: the
    /// default, Google's source hosts for the Google issuer and none otherwise.
    public var gitHosts: [String]? {
        get { bridges.gitHosts }
        set { bridges.gitHosts = newValue }
    }
    /// For some of those hosts, the API whose token git is given instead of the grant's own (`git_resources`: a
    /// host pattern to a resource indicator, one of `resources`): RFC 8707's token for that host alone.
    public var gitResources: [String: String] {
        get { bridges.gitResources }
        set { bridges.gitResources = newValue }
    }
    /// The registries `signin docker-credential get` answers (`docker_registries`): `host`, `host:port` or
    /// `*.domain`. Nil: Google's registries (`*-docker.pkg.dev`, `gcr.io`, `*.gcr.io`) for Google, none otherwise.
    public var dockerRegistries: [String]? {
        get { bridges.dockerRegistries }
        set { bridges.dockerRegistries = newValue }
    }
}
