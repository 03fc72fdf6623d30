import Synchronization
import SignInKit

/// What `exec --gce-metadata` and `metadata-server` say on standard error while they serve: each request with
/// `--verbose` (path and status, never a token), and once each, what the person should do about a refusal.
final class MetadataLog: Sendable {
    let verbose: Bool
    let configurationPath: String
    /// `signin login` with the configuration option this server was started with (the one it serves).
    let loginCommand: String
    private let said = Mutex<Set<String>>([])
    /// gcloud asks for an ID token for its own client on every run and does without: not worth a line.
    static let gcloudAudience = "32555940559.apps.googleusercontent.com"

    init(verbose: Bool, configurationPath: String, loginCommand: String = "signin login") {
        self.verbose = verbose
        self.configurationPath = configurationPath
        self.loginCommand = loginCommand
    }

    private func once(_ line: String, _ io: IOStreams) {
        if said.withLock({ $0.insert(line).inserted }) { io.err(line) }
    }

    func show(_ e: MetadataServer.Event, _ io: IOStreams) {
        switch e {
        case .request(let path, let status):
            if verbose { io.err("signin: metadata: GET \(path.withoutControlCharacters) \(status)") }
        case .refused(let reason):
            once("signin: metadata server refused a request: \(reason.withoutControlCharacters)", io)
        case .scopeMissing(let scopes, let account):
            once("signin: a tool asked for \(scopes.joined(separator: ", ").withoutControlCharacters), which the sign-in of \(account.withoutControlCharacters) was not granted: add it to \"scopes\" in \(configurationPath) and run `\(loginCommand)`.", io)
        case .audienceUnavailable(let audience):
            if audience == Self.gcloudAudience && !verbose { return }
            once("signin: a tool asked for an ID token for \(audience.withoutControlCharacters), which only a service account can have: name one with --impersonate-service-account SA (or impersonate_service_account).", io)
        case .failure(let error):
            var line = "signin: metadata server could not answer: \(error.description)"
            if case .noPreviousSignIn = error { line += "\nRun `\(loginCommand)` to sign in." }
            once(line, io)
        }
    }
}
