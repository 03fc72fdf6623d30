import SignInBase
import SignInProtocol
import FoundationEssentials

// A configuration file: where it lives (the XDG folder, named profiles, `SIGNIN_CONFIG`, the file an administrator
// deployed, the one profile-name rule), then how one is read (every family's section). Which file a run reads is
// `SignInSession`'s decision; whether it or an API's own sign-in serves a command is `APICommandConfiguration`'s.

/// Where configurations live, apart from what one holds: the XDG folder, named profiles and `SIGNIN_CONFIG`.
extension SignInConfiguration {
    /// The folder of named configurations: `$XDG_CONFIG_HOME/<appName>`, else `~/.config/<appName>` (a relative
    /// `$XDG_CONFIG_HOME` is ignored, as the XDG specification says).
    public static func directory(environment: [String: String], appName: String = "signin") -> String {
        ProcessEnvironment.xdgFolder(.config, appName: appName, environment: environment)
    }

    /// The file to read, first match wins: `explicit` (`--config`), `profile` (`--profile NAME`:
    /// `<directory>/NAME.json`), `$SIGNIN_CONFIG`, `$SIGNIN_PROFILE`, else `<directory>/config.json` (where it is
    /// missing and none was named, the reader falls back to `systemPath`).
    public static func defaultPath(explicit: String?, profile: String? = nil, environment: [String: String]) -> String {
        if let explicit, !explicit.isEmpty { return ProcessEnvironment.absolute(explicit) }
        if let profile, !profile.isEmpty { return directory(environment: environment) + "/\(profile).json" }
        if let p = environment["SIGNIN_CONFIG"], !p.isEmpty { return ProcessEnvironment.absolute(p) }
        if let p = environment["SIGNIN_PROFILE"], !p.isEmpty { return directory(environment: environment) + "/\(p).json" }
        return directory(environment: environment) + "/config.json"
    }

    /// The configuration an administrator deployed for everyone (MCP's enterprise-managed authorization, say): the
    /// first `<dir>/signin/config.json` of `$XDG_CONFIG_DIRS` (absolute folders only; default `/etc/xdg`), read only
    /// when the person has no configuration of their own, and only when root or this user owns it and no one else
    /// may write it (else it is passed over).
    public static func systemPath(environment: [String: String], appName: String = "signin") -> String? {
        let dirs = (environment["XDG_CONFIG_DIRS"].flatMap { $0.isEmpty ? nil : $0 } ?? "/etc/xdg").split(separator: ":").map(String.init).filter { $0.hasPrefix("/") }
        for dir in dirs {
            let path = dir + "/\(appName)/config.json"
            guard case .success(let st) = Posix.status(of: path), st.kind == .file else { continue }
            guard st.owner == 0 || st.isOurs, st.permissions & 0o022 == 0 else { continue }
            return path
        }
        return nil
    }

    /// Whether `name` can name a configuration: letters, digits, `.`, `_` and `-`, not starting with a dot or a
    /// dash (it would be read as an option).
    public static func isValidProfileName(_ name: String) -> Bool {
        !name.isEmpty && !name.hasPrefix(".") && !name.hasPrefix("-") && name.count <= 64 && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) }
    }

    /// Why `name`, given as `source` (`--profile`, `$SIGNIN_PROFILE`, the agent's `profile`), cannot name a
    /// configuration; nil when it can, or when none is given. The one wording of `isValidProfileName`'s rule.
    public static func profileNameProblem(_ name: String?, source: String) -> String? {
        guard let name, !name.isEmpty, !isValidProfileName(name) else { return nil }
        return "\(source) \"\(name.withoutControlCharacters)\" is not a configuration name (letters, digits, . _ -, not starting with . or -)"
    }

    /// The named configurations in `directory(environment:)`: `config` for `config.json`, else the file's name.
    public static func profileNames(environment: [String: String]) -> [String] {
        var names: [String] = []
        for name in Directory.fileNames(directory(environment: environment)) where name.hasSuffix(".json") && !name.hasPrefix(".") {
            names.append(String(name.dropLast(5)))
        }
        return names.sorted()
    }
}

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
