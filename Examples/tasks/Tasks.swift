// README's "Tasks" for library users, compiled with the package so that they cannot drift from the API.
// `swift run signin-tasks` runs them against your configuration in $XDG_CONFIG_HOME/my-tool/config.json.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import SignInKit

@main struct Tasks {
    static func main() async {
        do {
            try await run()
        } catch let error as SignInError {
            // Say what is needed and stop cleanly: a configuration of the program's own, first of all.
            FileHandle.standardError.write(Data("signin-tasks: \(error)\n".utf8))
            if case .configNotFound(let file) = error {
                FileHandle.standardError.write(Data("This example is a program of its own (\"my-tool\"); write its configuration with `signin init -c \(file)`.\n".utf8))
            }
            exit(1)
        } catch {
            FileHandle.standardError.write(Data("signin-tasks: \(error)\n".utf8))
            exit(1)
        }
    }

    static func run() async throws {
        // Its own configuration and store: $XDG_CONFIG_HOME/my-tool/config.json, $XDG_DATA_HOME/my-tool/.
        let client = SignInClient(configuration: try SignInConfiguration.loadDefault(appName: "my-tool"), appName: "my-tool")

        // Sign in, or restore silently.
        let user = client.hasPreviousSignIn ? try await client.restorePreviousSignIn() : try await client.signIn()
        print(try await greeting(client))  // code written against SignInClientProtocol (below)

        // Authorize your own request (URLSession, AsyncHTTPClient, anything): a fresh token, refreshed only when needed.
        var request = URLRequest(url: URL(string: "https://www.googleapis.com/drive/v3/files")!)
        request.setValue(try await user.authorizationHeaderValue(), forHTTPHeaderField: "Authorization")
        let token: SignInToken = try await user.freshToken()          // the value and its expirationDate
        let info = try await user.userInfo()                    // the provider's userinfo endpoint
        print(token.expirationDate as Any, info["email"] ?? "")

        // Show progress, from any actor: the events arrive in order and end with the sign-in.
        let (events, signIn) = client.signInWithEvents()
        for await event in events { if case .authorizationURL(let url, _, _, _) = event { print("Opening \(url)") } }
        let signedIn = try await signIn.value
        print(signedIn.profile.displayName)

        // Watch who is signed in (a sign-in, a sign-out, a switch of account).
        for await current in client.currentUserUpdates() {
            print(current?.profile.fullName ?? "signed out")
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
    }

    // Write your code against the protocols, so that your tests can pass a stand-in for the client and user.
    static func greeting(_ client: some SignInClientProtocol) async throws(SignInError) -> String {
        let user = try await client.restorePreviousSignIn()
        return "Hello, \(user.profile.fullName ?? "you")"
    }
}
