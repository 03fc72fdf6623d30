import SignInBase
import SignInProtocol
import SignInStorage
import SignInGrant
import SignInTransport
import FoundationEssentials

/// The authorization code grant with PKCE through the system browser and the loopback listener (RFC 6749 4.1,
/// RFC 7636, RFC 8252 7.3): bind the listener, build the request, open the browser, wait for the code (from the
/// listener or pasted), exchange it, and show the browser how it ended.
final class LoopbackAuthorization: AuthorizationGrant {
    let receiver: LoopbackReceiver
    let request: AuthorizationRequest
    let configuration: SignInConfiguration
    let endpoints: ProviderEndpoints
    let options: SignInOptions
    let environment: [String: String]
    let tokens: TokenClient
    private var answeredViaBrowser = false

    init(configuration: SignInConfiguration, endpoints: ProviderEndpoints, scopes: [String], options: SignInOptions,
         environment: [String: String], tokens: TokenClient) throws(SignInError) {
        self.configuration = configuration
        self.endpoints = endpoints
        self.options = options
        self.environment = environment
        self.tokens = tokens
        do throws(SignInError) {
            receiver = try LoopbackReceiver(port: options.port ?? configuration.redirectPort, path: configuration.redirectPath,
                                            host: configuration.redirectHost, sameUserOnly: configuration.listenerSameUserOnly)
        } catch .listenerUnavailable(let address, _) where configuration.clientKind == .registered && options.port == nil && configuration.redirectPort != 0 {
            // The client signin registered for this API has this one redirect port (its server matches it exactly), so
            // another port would only make the server refuse the sign-in: most likely another sign-in waits there.
            throw .listenerUnavailable(address: address, reason: "another sign-in to this API is most likely waiting in a browser there (port \(configuration.redirectPort) is the redirect port signin registered at \(configuration.issuer.withoutControlCharacters), which that server matches exactly); finish or cancel that sign-in, then run this again")
        }
        var asked = configuration
        for r in options.resources where !asked.resources.contains(r) { asked.resources.append(r) }
        request = try AuthorizationRequest(config: asked, endpoints: endpoints, redirectURI: receiver.redirectURI,
                                           scopes: scopes, loginHint: options.loginHint)
    }

    /// Opens the browser (unless told not to) and waits for a valid answer until `options.timeout` or cancellation.
    func awaitAnswer(canceller: Canceller, emit onEvent: @escaping @Sendable (SignInEvent) -> Void) throws(SignInError) -> AuthorizationResponse {
        let port = receiver.port
        // No display and no $BROWSER (an SSH session, a container): running xdg-open would only fail; say so instead.
        let outcome: BrowserLaunch? = !options.openBrowser ? nil
            : !Browser.localBrowserLikely(environment: environment)
            ? .unavailable(reason: "no browser is likely to open here (no display, or an SSH session, and no $BROWSER); open the address on a device with one")
            : options.failsWithoutBrowser ? Browser.openOrSayWhyNot(request.url, environment: environment)
            : Browser.open(request.url, environment: environment) { onEvent(.browserFailed(reason: $0, port: port)) }
        if options.failsWithoutBrowser, case .unavailable(let reason)? = outcome, let elsewhere = options.showAddressElsewhere,
           elsewhere(URL(string: request.url)!) {
            // The program showed the address itself (its client's page): waited for as a browser's answer.
            onEvent(.notice("no browser opens here (\(reason)); the sign-in page was offered through the client"))
        } else if options.failsWithoutBrowser {
            switch outcome {
            case .unavailable(let reason)?: throw .unsupported(reason: "No browser can be opened from here (\(reason)), and this sign-in does not wait for one")
            case nil: throw .unsupported(reason: "This sign-in may not open a browser, and does not wait for one")
            default: break
            }
        }
        // Built from a validated endpoint and encoded parameters, and from a loopback address and port.
        onEvent(.authorizationURL(url: URL(string: request.url)!, redirectURI: URL(string: receiver.redirectURI)!, port: port, browser: outcome))
        var validator = CallbackValidator(state: request.state, issuer: configuration.issuer)
        validator.issuerRules = configuration.providerRules
        validator.issuerRequired = endpoints.issuerParameterSupported == true
        validator.promptNone = configuration.extraAuthorizationParameters["prompt"]?.split(separator: " ").contains("none") == true
        let answer = try receiver.waitForCode(validator: validator, timeoutSeconds: options.timeoutSeconds, canceller: canceller, pasteFD: options.pasteFileDescriptor) { notice in
            switch notice {
            case .refusedCallback(let reason): onEvent(.refusedCallback(reason: reason.withoutControlCharacters))
            case .refusedPaste(let reason): onEvent(.refusedPaste(reason: reason.withoutControlCharacters))
            case .refusedPeer(let reason): onEvent(.refusedConnection(reason: reason))
            }
        }
        answeredViaBrowser = answer.viaBrowser
        // A pasted answer won: no browser will ask for the result page.
        if !answer.viaBrowser { receiver.close() }
        onEvent(.exchangingCode)
        return answer
    }

    /// Exchanges the code with the PKCE verifier, which never left this process.
    func exchange(_ answer: AuthorizationResponse) throws(SignInError) -> (response: TokenResponse, nonce: String?) {
        (try tokens.exchange(code: answer.code, verifier: request.pkce.verifier, redirectURI: request.redirectURI), request.nonce)
    }

    /// Shows the browser that brought the code how the sign-in ended (waiting a few seconds for it to ask), then
    /// closes the listener.
    func finish(_ page: ResultPage) {
        if answeredViaBrowser { receiver.finish(page, seconds: 3) } else { receiver.close() }
    }
}
