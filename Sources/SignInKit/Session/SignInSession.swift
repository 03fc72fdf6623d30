import SignInBase
import SignInProtocol
import SignInStorage
import SignInEnterprise
import FoundationEssentials

/// One run of a program on SignInKit (one `signin` command): what it uses, decided here and nowhere else, and each
/// part built only when the run asks for it. A command asks it for a forwarded agent (`forwardedAgentSocket`), a client
/// to sign in with or to read the store with (`client(for:onEvent:passphrase:confirmServerChange:)`), or an authorizer
/// for one API (`authorizer(for:...)`); nothing is read before a command asks.
///
/// 1. **A forwarded agent, or this machine.** `$SIGNIN_AGENT_SOCK` names an agent (forwarded with `signin ssh`) and no
///    configuration was named with `--config` or `--profile`: tokens come from that agent, and this machine's
///    configuration and store are not read. Otherwise this machine (`forwardedAgentSocket` is nil).
/// 2. **Which configuration file** (`configurationPath`), the first that says: `--config PATH`, `--profile NAME`
///    (`<folder>/NAME.json`), `$SIGNIN_CONFIG`, `$SIGNIN_PROFILE`, else `<folder>/config.json`. With both variables set
///    and neither option, `$SIGNIN_CONFIG` counts and `ignoredProfile` says so. A profile that is not a name (a path, a
///    leading dot or dash) is refused before anything is read (`profileNameProblem`: the one rule).
/// 3. **The file, or an API's own sign-in** (`configuration(for:confirmServerChange:)`; `APICommandConfiguration` has the
///    tree): the file; missing and none named, the one an administrator deployed (`$XDG_CONFIG_DIRS`), else the API
///    the command names (or the one signed in to from its address) with a sign-in of its own. An API the file does not
///    list gets its own sign-in, unless the file's enterprise sign-in serves it.
/// 4. **The client**, built only when a command asks for one, over that configuration, with the program's event
///    handler and passphrase.
/// 5. **An API's authorizer** (`authorizer(for:...)`, as `signin mcp URL` asks; it takes no `--config`): the configured
///    client and grant when the file lists the API in `resources` or its enterprise sign-in serves it; otherwise the
///    API's own sign-in, made only when the API asks for one (a 401). A file that cannot be used is said and passed
///    over: an API needs none.
package struct SignInSession: Sendable {
    /// The environment this run reads.
    package let environment: [String: String]
    /// `--config PATH`, `--profile NAME`: a configuration named on purpose (nil: not given).
    package let configurationOption: String?
    package let profileOption: String?
    /// `--account`, else `$SIGNIN_ACCOUNT`; nil for the current account.
    package let account: String?

    package init(environment: [String: String], configurationOption: String? = nil, profileOption: String? = nil, accountOption: String? = nil) {
        self.environment = environment
        self.configurationOption = configurationOption
        self.profileOption = profileOption
        account = accountOption ?? environment["SIGNIN_ACCOUNT"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Step 1: the forwarded agent this run asks, unless a configuration here is named on purpose.
    package var forwardedAgentSocket: String? {
        guard let socket = environment["SIGNIN_AGENT_SOCK"], !socket.isEmpty, configurationOption == nil, profileOption == nil else { return nil }
        return socket
    }

    /// Step 2: the configuration file this run reads.
    package var configurationPath: String {
        SignInConfiguration.defaultPath(explicit: configurationOption, profile: profileOption, environment: environment)
    }

    /// Whether the file was named on purpose (an option or a variable): then its absence is the error, even where an
    /// API is signed in to from its address or an administrator deployed one for everyone.
    package var configurationNamed: Bool {
        configurationOption != nil || profileOption != nil || !(environment["SIGNIN_CONFIG"] ?? "").isEmpty || !(environment["SIGNIN_PROFILE"] ?? "").isEmpty
    }

    /// What to tell a person who set both `$SIGNIN_CONFIG` and `$SIGNIN_PROFILE` (and neither option): which counts.
    package var ignoredProfile: String? {
        guard configurationOption == nil, profileOption == nil, let p = environment["SIGNIN_PROFILE"], !p.isEmpty,
              let c = environment["SIGNIN_CONFIG"], !c.isEmpty else { return nil }
        return "$SIGNIN_PROFILE (\(p.withoutControlCharacters)) is ignored: $SIGNIN_CONFIG names the configuration (\(c.withoutControlCharacters)); unset one of them"
    }

    /// Why the profile this run names (`--profile`, `$SIGNIN_PROFILE`) cannot name a configuration; nil when it can.
    package var profileProblem: String? {
        SignInConfiguration.profileNameProblem(profileOption, source: "--profile") ?? SignInConfiguration.profileNameProblem(environment["SIGNIN_PROFILE"], source: "$SIGNIN_PROFILE")
    }

    /// The profile this run names, refused before anything is read when it cannot name a configuration.
    private func requireProfileName() throws(SignInError) {
        if let problem = profileProblem { throw .configInvalid(file: SignInConfiguration.directory(environment: environment), field: nil, reason: problem) }
    }

    /// What a command asks of the configuration: its API (nil: none), whether it signs in, the scopes it adds.
    package typealias Need = APICommandConfiguration.Command

    /// Step 3: the configuration a command with `need` uses. `confirmServerChange` is asked when an API now names
    /// another authorization server (a person at a terminal may say yes).
    package func configuration(for need: Need, confirmServerChange: (String) -> Bool = { _ in false }) throws(SignInError) -> SignInConfiguration {
        try requireProfileName()
        let env = environment
        return try APICommandConfiguration.resolve(path: configurationPath, named: { configurationNamed }, need,
                                                   storeDirectory: { CredentialStore.defaultDirectory(environment: env) }, environment: env,
                                                   confirmServerChange: confirmServerChange)
    }

    /// Step 4: the client over the configuration a command with `need` uses.
    package func client(for need: Need, onEvent: @escaping @Sendable (SignInEvent) -> Void, passphrase: PassphraseProvider?,
                        confirmServerChange: (String) -> Bool = { _ in false }) throws(SignInError) -> SignInClient {
        SignInClient(configuration: try configuration(for: need, confirmServerChange: confirmServerChange), environment: environment, onEvent: onEvent,
                     passphrase: passphrase)
    }

    /// The configuration file, for a run that needs none (`signin mcp`): nil when there is none, or when it cannot be
    /// used (`notice` hears why). Missing and none named: the one an administrator deployed.
    package func optionalConfiguration(notice: (String) -> Void) -> SignInConfiguration? {
        do throws(SignInError) {
            try requireProfileName()
            return try SignInConfiguration.load(path: configurationPath, orDeployedUnlessNamed: { configurationNamed }, environment: environment)
        } catch .configNotFound {
            return nil
        } catch {
            notice("the configuration is not used: \(error.description)")
            return nil
        }
    }

    /// Step 5: the authorizer for the API at `resource`, and the configuration it was chosen with (its `ca_file`
    /// and `proxy` reach every request: the API's, its metadata's, its authorization server's, even for a sign-in of
    /// the API's own; a file holding only them serves so). `scopes` are asked at the API's own first sign-in; `notice` hears what a person
    /// should know (a file passed over, a server the enterprise sign-in cannot serve).
    package func authorizer(for resource: String, scopes: [String], options: SignInOptions, onEvent: @escaping @Sendable (SignInEvent) -> Void,
                            notice: (String) -> Void) -> (authorizer: APIAuthorizer, configuration: SignInConfiguration?) {
        let configuration = optionalConfiguration(notice: notice)
        // With enterprise_authorization, and no sign-in of the server's own here, the IdP sign-in buys its token.
        var enterprise = false
        if let configuration, APICommandConfiguration.enterpriseServes(resource, configuration, storeDirectory: CredentialStore.defaultDirectory(environment: environment)) {
            enterprise = EnterpriseFamily.takesIdentityAssertion(for: resource, configuration: configuration)
            if !enterprise {
                notice("\(resource.withoutControlCharacters) takes no enterprise sign-in here (its authorization server has no registration in the configuration's enterprise_authorization); it is signed in to on its own")
            }
        }
        if let configuration, !configuration.isForAPIsOnly, configuration.resources.contains(resource) || enterprise {
            return (APIAuthorizer(resource: resource, configuration: configuration, allowsInteractiveSignIn: true, options: options, environment: environment,
                                  onEvent: onEvent), configuration)
        }
        return (APIAuthorizer(resource: resource, allowsInteractiveSignIn: true, options: options, scopes: scopes, environment: environment,
                              signsInOnlyWhenAsked: true, network: configuration?.network ?? NetworkSettings(), onEvent: onEvent), configuration)
    }
}
