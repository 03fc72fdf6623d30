import SignInBase
import FoundationEssentials

/// Where configurations live, apart from what one holds: the XDG folder, named profiles and `SIGNIN_CONFIG`.
extension SignInConfiguration {
    /// The folder of named configurations: `$XDG_CONFIG_HOME/<appName>`, else `~/.config/<appName>` (a relative
    /// `$XDG_CONFIG_HOME` is ignored, as the XDG specification says).
    public static func directory(environment: [String: String], appName: String = "signin") -> String {
        ProcessEnvironment.xdgFolder(.config, appName: appName, environment: environment)
    }

    /// The file to read, first match wins: `explicit` (`--config`), `profile` (`--profile NAME`:
    /// `<directory>/NAME.json`), `$SIGNIN_CONFIG`, `$SIGNIN_PROFILE`, else `<directory>/config.json`.
    public static func defaultPath(explicit: String?, profile: String? = nil, environment: [String: String]) -> String {
        if let explicit, !explicit.isEmpty { return ProcessEnvironment.absolute(explicit) }
        if let profile, !profile.isEmpty { return directory(environment: environment) + "/\(profile).json" }
        if let p = environment["SIGNIN_CONFIG"], !p.isEmpty { return ProcessEnvironment.absolute(p) }
        if let p = environment["SIGNIN_PROFILE"], !p.isEmpty { return directory(environment: environment) + "/\(p).json" }
        return directory(environment: environment) + "/config.json"
    }

    /// Whether `name` can name a configuration: letters, digits, `.`, `_` and `-`, not starting with a dot or a
    /// dash (it would be read as an option).
    public static func isValidProfileName(_ name: String) -> Bool {
        !name.isEmpty && !name.hasPrefix(".") && !name.hasPrefix("-") && name.count <= 64 && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) }
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
