import Foundation
import SignInKit

// README's SignInKit example, built with the package so it stays true (`swift run signin-hello`). A program of its
// own, "signin-hello": its configuration in $XDG_CONFIG_HOME/signin-hello/config.json, its credentials in
// $XDG_DATA_HOME/signin-hello/, apart from the `signin` command's (the name is given once, to the configuration).
@main struct Hello {
    static func main() async {
        do throws(SignInError) {
            let client = SignInClient(configuration: try SignInConfiguration.loadDefault(appName: "signin-hello"))
            let user = client.hasPreviousSignIn
                ? try await client.restorePreviousSignIn()   // silent: no browser, a refresh if needed
                : try await client.signIn()                  // opens the browser (or says none can open here)
            print("Hello, \(user.profile.displayName)")
            let token = try await user.freshToken(minimumValidity: .seconds(60))
            print("An access token of \(token.value.count) characters for \(user.grantedScopes.joined(separator: " "))")
        } catch {
            // Every error is a SignInError: a sentence for a person, never a token.
            FileHandle.standardError.write(Data("signin-hello: \(error)\n".utf8))
            if case .configNotFound(let file) = error {
                FileHandle.standardError.write(Data("Write one with `signin init -c \(file)`.\n".utf8))
            }
            exit(1)
        }
    }
}
