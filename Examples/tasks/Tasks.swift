// README's "Tasks" for library users, compiled with the package so that they cannot drift from the API.
// `swift run signin-tasks` runs them against your configuration in $XDG_CONFIG_HOME/my-tool/config.json.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import SignInKit
import SignInKitURLSession

@main struct Tasks {
    static func main() async {
        do throws(SignInError) {
            try await run()
        } catch {
            // Say what is needed and stop cleanly: a configuration of the program's own, first of all.
            FileHandle.standardError.write(Data("signin-tasks: \(error)\n".utf8))
            if case .configNotFound(let file) = error {
                FileHandle.standardError.write(Data("This example is a program of its own (\"my-tool\"); write its configuration with `signin init -c \(file)`.\n".utf8))
            }
            exit(1)
        }
    }

    static func run() async throws(SignInError) {
        // README: tasks
        // Its own configuration and store: $XDG_CONFIG_HOME/my-tool/config.json, $XDG_DATA_HOME/my-tool/ (the
        // name is given once: the client takes it from the configuration).
        let client = SignInClient(configuration: try SignInConfiguration.loadDefault(appName: "my-tool"))

        // Sign in, or restore silently. Where no browser can open (SSH, no display), offer the device flow.
        let options = SignInOptions(useDeviceFlow: !SignInOptions.browserLikely())
        let user = client.hasPreviousSignIn ? try await client.restorePreviousSignIn() : try await client.signIn(options: options)

        // Call an API: authorized with a fresh token, sent with URLSession, retried once with a refreshed token
        // if the server says the token is no longer valid (401). Safe from many tasks at once: one refresh.
        let url = user.endpoints.userinfoEndpoint ?? URL(string: "https://openidconnect.googleapis.com/v1/userinfo")!
        let (data, response) = try await user.perform(URLRequest(url: url))
        print(response.statusCode, data.count)
        // Or only authorize a request for another HTTP client; or take the token and its expiry.
        let request = try await user.authorize(URLRequest(url: url))
        let token: SignInToken = try await user.freshToken()
        print(request.value(forHTTPHeaderField: "Authorization") != nil, token.expirationDate as Any)

        // The provider's claims as JSON values, from the endpoint stored at sign-in (no discovery).
        let claims = try await user.userInfo()
        print(claims["email"]?.string ?? "", claims["email_verified"]?.bool ?? false)

        // Show progress, from any actor: the events arrive in order and end with the sign-in. Cancelling the task
        // that iterates them (a SwiftUI .task going away), or one awaiting `value`, cancels the sign-in.
        let (events, signIn) = client.signInWithEvents()
        for await event in events { if case .authorizationURL(let url, _, _, _) = event { print("Opening \(url)") } }
        let signedIn = try await signIn.value
        print(signedIn.profile.displayName)

        // Follow who is signed in: sign-ins, sign-outs, switches, refreshes, a grant the provider ended, and the
        // same done by another process (the signin command) on this store.
        for await current in client.currentUserUpdates() {
            if let current, current.grantEndedAt == nil { print("signed in:", current.profile.displayName) } else { print("signed out") }
            break
        }

        // Handle each error: every public function throws SignInError (typed throws), so the switch needs no cast.
        do { _ = try await client.restorePreviousSignIn() } catch {
            switch error {
            case .noPreviousSignIn: break                        // sign in again
            case .canceled: break                                // the task was cancelled: nothing changed
            case .networkUnavailable, .providerError: break      // try later: nothing changed
            default: print(error.localizedDescription)           // a sentence for your user, without secrets
            }
        }

        // Sign out: here only, or also at the provider.
        try client.signOut()
        try await client.disconnect()

        // Keep credentials elsewhere: in memory (nothing survives the process), or any CredentialStorage of yours.
        let ephemeral = SignInClient(configuration: client.configuration, storage: InMemoryCredentialStorage())
        print(ephemeral.hasPreviousSignIn)
        // README: end
        print(try await greeting(client))
    }

}

// README: protocols
// Write your code against the protocols, so that your tests can pass a stand-in for the client and the user:
// everything above is on them; a stand-in implements the core (restore, sign in, sign out, disconnect,
// currentUser, hasPreviousSignIn; profile, grantedScopes, freshToken, userInfo) and gets the rest by default.
func greeting(_ client: some SignInClientProtocol) async throws(SignInError) -> String {
    let user = try await client.restorePreviousSignIn().refreshTokensIfNeeded()
    let (_, response) = try await user.perform(URLRequest(url: URL(string: "https://example.org/api/me")!))
    return "Hello, \(user.profile.fullName ?? "you") (\(response.statusCode)) at \(client.configuration.issuer)"
}

struct StandInUser: SignInUserProtocol {
    var profile = SignInProfile(userID: "42", name: "Stand In")
    var grantedScopes = ["openid"]
    func freshToken(minimumValidity: Duration) async throws(SignInError) -> SignInToken { SignInToken(value: "test", expirationDate: nil) }
    func userInfo() async throws(SignInError) -> [String: JSONValue] { ["sub": .string("42")] }
}
// README: end
