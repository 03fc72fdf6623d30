import SignInKit

// README's SignInKit example, built with the package so it stays true (`swift run signin-hello`).
@main struct Hello {
    static func main() async throws {
        let client = SignInClient(configuration: try SignInConfiguration.loadDefault())
        let user = client.hasPreviousSignIn
            ? try await client.restorePreviousSignIn()   // silent: no browser, a refresh if needed
            : try await client.signIn()                  // opens the browser
        print("Hello, \(user.profile.displayName)")
        let token = try await user.freshAccessToken(minimumValidity: .seconds(60))
        print("An access token of \(token.count) characters for \(user.grantedScopes.joined(separator: " "))")
    }
}
