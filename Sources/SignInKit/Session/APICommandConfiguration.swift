import SignInBase
import SignInProtocol
import SignInStorage
import SignInTransport
import SignInEnterprise
import FoundationEssentials

/// Which configuration a command for one API uses (`signin login|token|whoami|status|exec|logout --resource URL`, and
/// plain commands when only APIs are signed in): the decision, in one place (`resolve`, which also reads the file); the
/// command line asks it and renders what it answers.
///
/// 1. No provider of the file's (no file, none named; or a file with only `client_id_metadata_document`): the API the
///    command names, else the one API signed in to from its address (`onlyAPISignIn`: with several, the one
///    `signin use URL` chose, else an error naming them); none at all: the file is what is missing (or, in a file with
///    only the document, its `client_id`), said naming it.
/// 2. A configuration that lists the API in `resources`: the configuration (the person's client and grant serve it).
///    A configuration with `enterprise_authorization` (MCP's enterprise-managed authorization), for an API with no
///    sign-in of its own here: the configuration too (an ID-JAG bought with the person's IdP sign-in serves it:
///    `EnterpriseFamily`), for a command that signs in only where the API's authorization server takes ID-JAGs.
/// 3. Any other API never gets the person's own client and grant, even when its metadata names the configured
///    provider (any server can name accounts.google.com): it has a sign-in of its own.
///    - A command that does not sign in: the API's sign-in kept in the store; none: not signed in (exit 3), and
///      nothing asked of any server, nothing registered (`notSignedIn`).
///    - A command that signs in (`signIn`): the token held for the API is presented to it (with its DPoP proof when
///      bound), so a 403 `insufficient_scope` makes the sign-in a step-up; a client signin registered is refreshed
///      first, and one the server forgot (`invalid_client`) is registered again; the client ID metadata document is
///      the configuration's, else `$SIGNIN_CLIENT_ID_METADATA_DOCUMENT`. An API that now names another
///      authorization server is followed only when `confirmServerChange` says yes (a person at a terminal);
///      otherwise refused, naming both servers.
package enum APICommandConfiguration {
    /// What a command asks for: its API (nil: none named), whether it signs in, and the scopes it adds.
    package struct Command: Sendable {
        package var resource: String?
        package var signsIn: Bool
        package var addedScopes: [String]

        package init(resource: String?, signsIn: Bool, addedScopes: [String]) {
            self.resource = resource
            self.signsIn = signsIn
            self.addedScopes = addedScopes
        }
    }

    /// The configuration a command uses, the file at `path` read here: the whole tree above. `named`: whether the file
    /// was named on purpose (`-c`, `--profile`, `$SIGNIN_CONFIG`, `$SIGNIN_PROFILE`), so that its absence is the error
    /// even when an API is signed in to from its address; asked only when the file is missing. `storeDirectory` is
    /// asked only when an API's sign-in is looked for.
    package static func resolve(path: String, named: () -> Bool, _ command: Command, storeDirectory: () -> String, environment: [String: String],
                                confirmServerChange: (String) -> Bool) throws(SignInError) -> SignInConfiguration {
        let loaded: SignInConfiguration
        do throws(SignInError) {
            // None of the person's own and none named: the one an administrator deployed for everyone, if any.
            loaded = try SignInConfiguration.load(path: path, orDeployedUnlessNamed: named, environment: environment)
        } catch .configNotFound(let file) {
            guard !named(), let api = try withoutProvider(command, file: file, storeDirectory: storeDirectory(), environment: environment, httpTimeout: .seconds(30),
                                                        network: NetworkSettings(), document: nil, confirmServerChange: confirmServerChange) else { throw .configNotFound(file: file) }
            return api
        }
        if loaded.isForAPIsOnly {
            // No provider of its own: as with no configuration, but with its document and settings (`ca_file`, ...).
            guard let api = try withoutProvider(command, file: loaded.sourcePath, storeDirectory: storeDirectory(), environment: environment, httpTimeout: loaded.httpTimeout,
                                                network: loaded.network, document: loaded.clientIDMetadataDocument, confirmServerChange: confirmServerChange) else {
                throw .configInvalid(file: loaded.sourcePath, field: "client_id", reason: "missing: this configuration only holds settings for API sign-ins (client_id_metadata_document, ca_file, proxy, http_timeout), and no API is signed in; `signin login --resource URL` signs one in")
            }
            return api
        }
        return try withProvider(loaded, command, storeDirectory: storeDirectory(), environment: environment, confirmServerChange: confirmServerChange)
    }

    /// Step 1: with no provider of the file's, the configuration of the API the command names or of the one API signed
    /// in to from its address; nil when there is none. `file`: the configuration file looked for (named in errors).
    package static func withoutProvider(_ command: Command, file: String, storeDirectory: String, environment: [String: String], httpTimeout: Duration,
                                        network: NetworkSettings, document: String?, confirmServerChange: (String) -> Bool) throws(SignInError) -> SignInConfiguration? {
        let implicit: String? = command.resource == nil ? try onlyAPISignIn(storeDirectory, file: file) : nil
        guard let resource = command.resource ?? implicit else { return nil }
        return try forAPI(resource, command, storeDirectory: storeDirectory, environment: environment, httpTimeout: httpTimeout, network: network,
                          document: document, confirmServerChange: confirmServerChange)
    }

    /// Steps 2 and 3: the configuration a command uses, `loaded` being the file's. (`storeDirectory` is asked only for
    /// an API the file does not list: finding it may ask the user database, which a cached command must not.)
    package static func withProvider(_ loaded: SignInConfiguration, _ command: Command, storeDirectory: @autoclosure () -> String, environment: [String: String],
                                     confirmServerChange: (String) -> Bool) throws(SignInError) -> SignInConfiguration {
        guard let resource = command.resource, !loaded.resources.contains(resource) else { return loaded }
        // Step 2b: MCP's enterprise-managed authorization: the person's grant at the company's IdP buys a token for an
        // MCP server (`EnterpriseFamily`), unless the server has a sign-in of its own here. A command that signs in
        // (`login --resource URL`) does so where the server's authorization server takes ID-JAGs (asked of the network
        // now): the sign-in is at the IdP, and the server's token is bought with it; else it signs in to the server.
        if enterpriseServes(resource, loaded, storeDirectory: storeDirectory()),
           !command.signsIn || EnterpriseFamily.takesIdentityAssertion(for: resource, configuration: loaded) { return loaded }
        return try forAPI(resource, command, storeDirectory: storeDirectory(), environment: environment, httpTimeout: loaded.httpTimeout,
                          network: loaded.network, document: loaded.clientIDMetadataDocument, confirmServerChange: confirmServerChange)
    }

    /// Whether `loaded`'s enterprise sign-in may serve `resource`, told from the file and the store alone: it has an
    /// `enterprise_authorization` section, does not list `resource` in `resources`, and the API has no sign-in of its
    /// own here (which would serve it instead).
    package static func enterpriseServes(_ resource: String, _ loaded: SignInConfiguration, storeDirectory: String) -> Bool {
        loaded.enterpriseAuthorization.isEnabled && !loaded.resources.contains(resource)
            && APIAccess.knownConfiguration(for: resource, storeDirectory: storeDirectory, httpTimeout: loaded.httpTimeout, network: loaded.network) == nil
    }

    /// With no configuration and no API named: the one API signed in to from its address, which is then the current
    /// sign-in (nil: none, so the configuration is what is missing); several: the one `signin use URL` chose, else
    /// an error saying how to name one.
    package static func onlyAPISignIn(_ storeDirectory: String, file: String) throws(SignInError) -> String? {
        let s = CredentialStore(directory: storeDirectory)
        let apis = (try? s.apiResources()) ?? []
        guard apis.count > 1 else { return apis.first }
        if let chosen = try? s.currentAPI(), apis.contains(chosen) { return chosen }
        throw .configInvalid(file: file, field: nil, reason: "there is no configuration file, and \(apis.count) APIs are signed in to from their address (\(apis.map(\.withoutControlCharacters).joined(separator: ", "))): name one with --resource URL, or choose one with `signin use URL` (`signin accounts` lists them)")
    }

    /// The error of a command that reads an API's sign-in when there is none: not signed in (exit 3), with what to run.
    package static func notSignedIn(to resource: String) -> SignInError {
        .noPreviousSignIn(reason: .nothingStored(issuer: "the API \(resource.withoutControlCharacters)"))
    }

    /// Step 3: the API's own sign-in.
    static func forAPI(_ resource: String, _ command: Command, storeDirectory store: String, environment env: [String: String], httpTimeout: Duration,
                       network: NetworkSettings, document: String?, confirmServerChange: (String) -> Bool) throws(SignInError) -> SignInConfiguration {
        let known = APIAccess.knownConfiguration(for: resource, storeDirectory: store, httpTimeout: httpTimeout, network: network)
        guard command.signsIn else {
            if let known { return known }
            throw notSignedIn(to: resource)
        }
        let knownClient = known.map { SignInClient(configuration: $0, storeDirectory: store, environment: env) }
        let heldUser: SignInUser? = knownClient.flatMap { (try? $0.storedUser(account: nil)) ?? nil }
        let held = heldUser?.accessToken?.value
        // Presented as the grant presents it: a DPoP-bound token with its proof, never as a bare bearer token.
        let presenting = held.flatMap { token in URL(string: resource).flatMap { try? heldUser?.authorizationHeaders(token: token, method: "GET", url: $0) } }
        // A client signin registered, which the server may have forgotten (a development server restarted with its
        // registrations in memory): a refresh says so before a browser shows the server's error page.
        var forgotten = false
        if let knownClient, knownClient.configuration.clientKind == .registered, held != nil {
            do throws(SignInError) {
                _ = try knownClient.restore(minimumValidity: .zero, forceRefresh: true)
            } catch .providerError(_, "invalid_client", _) {
                forgotten = true
            } catch {}
        }
        let chosen = document ?? env["SIGNIN_CLIENT_ID_METADATA_DOCUMENT"].flatMap { $0.isEmpty ? nil : $0 }
        if let chosen, EndpointURL.problem(chosen) != nil {
            throw .configInvalid(file: "$SIGNIN_CLIENT_ID_METADATA_DOCUMENT", field: nil, reason: "\(chosen.withoutControlCharacters) is not an https URL")
        }
        func signIn(allowingServerChange: Bool) throws(SignInError) -> SignInConfiguration {
            try APIAccess.configurationForSignIn(for: resource, storeDirectory: store, presenting: held, httpTimeout: httpTimeout, network: network, clientMetadataDocument: chosen,
                                                 addingScopes: command.addedScopes, registeringAgain: forgotten, presentingHeaders: presenting,
                                                 allowingServerChange: allowingServerChange)
        }
        do throws(SignInError) {
            return try signIn(allowingServerChange: false)
        } catch .providerError(let endpoint, "authorization_server_changed", let detail) {
            // The first step of a mix-up, or a move: followed only when a person says so.
            guard confirmServerChange((detail ?? "").withoutControlCharacters) else {
                throw .providerError(endpoint: endpoint, code: "authorization_server_changed", detail: detail)
            }
            return try signIn(allowingServerChange: true)
        }
    }
}
