import SignInBase
import SignInTransport
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// What arrived at the redirect URI (or was pasted back): a code to exchange.
package struct AuthorizationResponse: Sendable, CustomStringConvertible {
    package let code: String
    /// Never the code.
    package var description: String { "AuthorizationResponse(code: \(code.count) characters, via \(viaBrowser ? "browser" : "paste"))" }
    /// True when it came through the listener, so the browser waits for a result page.
    package let viaBrowser: Bool
}

/// What the listener did that the person should hear about.
package enum ReceiverNotice: Sendable, Equatable {
    case refusedCallback(reason: String)
    case refusedPaste(reason: String)
    /// A connection from another local user (or from an owner that cannot be found), closed unanswered.
    case refusedPeer(reason: String)
}

/// The OAuth redirect's handler on a `LoopbackServer`: receives the authorization response on
/// `http://127.0.0.1:<port>/<path>` (or pasted back from the browser's address bar), then shows the browser how
/// the sign-in ended. Anything but the callback path gets 404 and the wait goes on; a callback with the wrong state
/// is refused and the wait goes on; every page is HTML with a strict content security policy.
package final class LoopbackReceiver {
    /// The listener's life, shared with every local server.
    let service: LocalService
    package var server: LoopbackServer { service.server }
    let callbackPath: String
    package var port: Int { server.port }
    var resultPath: String { callbackPath == "/" ? "/signin-result" : callbackPath + "-result" }
    /// `127.0.0.1`, or `localhost` (which a browser may resolve to `[::1]`, bound on the same port).
    package let redirectHost: String
    package var redirectURI: String { "http://\(redirectHost):\(port)\(callbackPath)" }

    /// Binds the loopback addresses. Port 0 lets the system choose; [::1] joins on the same port when it can.
    package init(port: Int, path: String, host: String = "127.0.0.1", sameUserOnly: Bool = true) throws(SignInError) {
        callbackPath = path
        redirectHost = host
        service = LocalService(try LoopbackServer(port: port, sameUserOnly: sameUserOnly, methods: ["GET", "HEAD"], ownBothFamilies: host == "localhost",
                                                  errorResponse: Self.status))
    }

    package func close() { server.close() }

    // MARK: The two phases

    /// Waits for a valid callback (or a valid pasted address on `pasteFD`), for `timeoutSeconds` or until
    /// cancellation.
    package func waitForCode(validator: CallbackValidator, timeoutSeconds: Int, canceller: Canceller,
                     pasteFD: Int32?, notice: (ReceiverNotice) -> Void) throws(SignInError) -> AuthorizationResponse {
        let paste = pasteFD.map(PasteReader.init)
        let answer = try service.server.serve(until: MonotonicClock.now() + Double(timeoutSeconds), canceller: canceller, lines: paste,
            notice: { n in
                switch n {
                case .refusedHost(let reason): notice(.refusedCallback(reason: reason))
                case .refusedPeer(let reason): notice(.refusedPeer(reason: reason))
                }
            },
            handler: { (r: HTTPRequestHead) throws(SignInError) -> (LoopbackResponse, AuthorizationResponse?) in
                guard r.path == self.callbackPath else { return (Self.status("404 Not Found"), nil) }
                switch validator.check(query: r.query) {
                case .accept(let code):
                    // Redirect so the code leaves the address bar and history; the result page is served by `finish`.
                    var redirect = Self.page("303 See Other", .failure("Continue to the result.", next: ""))
                    redirect.headers.append(("Location", self.resultPath))
                    return (redirect, AuthorizationResponse(code: code, viaBrowser: true))
                case .refuse(let reason):
                    notice(.refusedCallback(reason: reason))
                    return (Self.page("400 Bad Request", .failure("This sign-in response was refused: \(reason).", next: "If you started a sign-in, it is still waiting in the terminal.")), nil)
                case .end(let error):
                    throw error
                }
            },
            failure: { Self.page("200 OK", Self.failurePage(for: $0)) },
            onLine: { (line: String) throws(SignInError) -> AuthorizationResponse? in
                switch validator.checkPasted(line) {
                case .accept(let code): return AuthorizationResponse(code: code, viaBrowser: false)
                case .refuse(let reason): notice(.refusedPaste(reason: reason)); return nil
                case .end(let error): throw error
                }
            })
        guard let answer else { throw .timedOut(after: .seconds(timeoutSeconds)) }
        return answer
    }

    /// Serves the result page to the browser that followed the redirect, waiting at most `seconds`; then closes.
    package func finish(_ page: ResultPage, seconds: Double) {
        defer { self.close() }
        _ = try? service.server.serve(until: MonotonicClock.now() + seconds, canceller: nil, notice: { _ in },
            handler: { (r: HTTPRequestHead) throws(SignInError) -> (LoopbackResponse, Bool?) in
                r.path == self.resultPath ? (Self.page("200 OK", page), true) : (Self.status("404 Not Found"), nil)
            },
            failure: { Self.page("200 OK", Self.failurePage(for: $0)) })
    }

    /// Ends a wait that a callback ended with an error: the browser that sent it gets a page saying why.
    private static func failurePage(for error: SignInError) -> ResultPage {
        if case .canceled = error { return .failure("Sign-in was canceled.", next: "You can close this tab.") }
        return .failure(error.description)
    }

    // MARK: Pages

    package static func status(_ s: String) -> LoopbackResponse { page(s, .failure(s, next: "This address is used by signin for sign-in only.")) }

    /// An HTML page, never cached, framed, sniffed or leaking a referrer, running no script.
    package static func page(_ status: String, _ page: ResultPage) -> LoopbackResponse {
        LoopbackResponse(status: status, headers: [
            ("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", "no-store"), ("Referrer-Policy", "no-referrer"),
            ("X-Content-Type-Options", "nosniff"), ("X-Frame-Options", "DENY"),
            ("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'"),
        ], body: Array(page.html.utf8))
    }
}
