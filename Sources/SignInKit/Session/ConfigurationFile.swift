import SignInBase
import SignInProtocol
import FoundationEssentials

/// Reading a configuration file: one read, the core's keys and every section's (each registered family's:
/// `TokenFamilies.configurationSections`, then the key storage's and the bridges'), a key nobody owns refused with a
/// suggestion.
extension SignInConfiguration {
    /// Every section a configuration file is read with.
    static let fileSections: [any ConfigurationSection.Type] = TokenFamilies.configurationSections + [KeyStorageSettings.self, BridgeSettings.self]
    /// The families that know providers by name (Google's): the token families; the sections of settings alone name none.
    static let providerFamilies = ProviderFamilies(TokenFamilies.configurationSections)

    /// This configuration with the providers SignInKit's families know (Google's, the default issuer among them),
    /// when it has none yet: one built in code, as `SignInClient` takes it.
    package var withKnownProviders: SignInConfiguration {
        guard families.isEmpty else { return self }
        var c = self
        c.adopt(Self.providerFamilies)
        return c
    }

    /// Parses configuration JSON with every section; `sourcePath` is used in error messages.
    public static func parse(_ data: Data, sourcePath: String) throws(SignInError) -> SignInConfiguration {
        try parse(data, sourcePath: sourcePath, sections: fileSections, providers: providerFamilies)
    }

    /// Reads the configuration from `defaultPath(explicit:profile:environment:)` with the process environment;
    /// with `appName`, a program's own `$XDG_CONFIG_HOME/<appName>/config.json` instead.
    public static func loadDefault(explicitPath: String? = nil, profile: String? = nil, appName: String? = nil) throws(SignInError) -> SignInConfiguration {
        let env = ProcessEnvironment.current
        if let problem = profileNameProblem(profile, source: "profile") ?? profileNameProblem(env["SIGNIN_PROFILE"], source: "$SIGNIN_PROFILE") {
            throw .configInvalid(file: directory(environment: env, appName: appName ?? "signin"), field: nil, reason: problem)
        }
        var c = try (appName != nil && explicitPath == nil)
            ? load(path: directory(environment: env, appName: appName!) + "/\(profile ?? "config").json")
            : load(path: defaultPath(explicit: explicitPath, profile: profile, environment: env))
        c.appName = appName
        return c
    }

    /// The configuration at `path`; where it is missing and none was named on purpose (`named`, asked only then), the one
    /// an administrator deployed for everyone (`systemPath`), if any; else `.configNotFound` naming `path`.
    package static func load(path: String, orDeployedUnlessNamed named: () -> Bool, environment: [String: String]) throws(SignInError) -> SignInConfiguration {
        do throws(SignInError) {
            return try load(path: path)
        } catch .configNotFound(let file) {
            guard !named(), let system = systemPath(environment: environment) else { throw .configNotFound(file: file) }
            return try load(path: system)
        }
    }

    /// Reads and checks a configuration file. Every error names the file and, where there is one, the field.
    public static func load(path: String) throws(SignInError) -> SignInConfiguration {
        let data: Data
        do {
            data = try FileIO.read(path: path, limit: 1 << 20)
        } catch let e {
            if e.notFound {
                throw .configNotFound(file: path)
            }
            throw .configInvalid(file: path, field: nil, reason: e.reason)
        }
        return try parse(data, sourcePath: path)
    }
}
