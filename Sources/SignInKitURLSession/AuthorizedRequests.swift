// SignInKit's requests through URLSession (FoundationNetworking on Linux), in a module of its own: importing
// Foundation's networking costs start-up time that the `signin` command, which never uses it, must not pay.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import SignInKit

extension SignInUserProtocol {
    /// `request` with `Authorization: Bearer <token>` (or, for a DPoP-bound grant, `Authorization: DPoP <token>`
    /// and a `DPoP` proof for its method and URL), the token valid for at least `minimumValidity` more (refreshed
    /// only when needed).
    /// With `resource` or `audience`: the token for that API alone (RFC 8707, RFC 8693).
    public func authorize(_ request: URLRequest, minimumValidity: Duration = .seconds(60), resource: String? = nil, audience: String? = nil) async throws(SignInError) -> URLRequest {
        let token = try await freshToken(resource: resource, audience: audience, minimumValidity: minimumValidity, forceRefresh: false).value
        return try authorized(request, token: token)
    }

    func authorized(_ request: URLRequest, token: String) throws(SignInError) -> URLRequest {
        var r = request
        guard let url = request.url else {
            r.setValue("Bearer " + token, forHTTPHeaderField: "Authorization")
            return r
        }
        for (name, value) in try authorizationHeaders(token: token, method: request.httpMethod ?? "GET", url: url) { r.setValue(value, forHTTPHeaderField: name) }
        return r
    }

    /// Sends `request` authorized with a fresh token through `session`, and when the server answers 401 because
    /// of the token (RFC 6750: `WWW-Authenticate: Bearer error="invalid_token"`, or a 401 without a challenge),
    /// marks that token rejected, refreshes, and sends it once more. Any other answer, a 401 of another kind
    /// included, is returned as it is, with its body.
    ///
    /// Safe to call from many tasks at once: however many get a 401 for the same token, the store sees one
    /// refresh (a rejection is recorded only while the token is the stored one, and the refresh runs under the
    /// account's lock, where the others then find the new token). Cancelling the calling task cancels the request
    /// (`.canceled`); a transport failure is `.networkUnavailable` naming the host; the token is in no error.
    ///
    /// The token goes only to the origin (scheme, host and port) of `request`: a redirect to another origin is
    /// followed without `Authorization`, as browsers and curl do, and a 401 from there is returned as it is (no
    /// token is marked, none refreshed, nothing sent again). So redirects are followed by a session of this call's
    /// own, made with `session`'s configuration (`session`'s delegate, if it has one, is not asked).
    ///
    /// With `resource` (RFC 8707) or `audience` (RFC 8693): the token for that API alone, kept per API; a 401 that
    /// refuses it gets a new one for that API (the grant's own token is not marked).
    public func perform(_ request: URLRequest, session: URLSession = .shared, minimumValidity: Duration = .seconds(60),
                        resource: String? = nil, audience: String? = nil) async throws(SignInError) -> (Data, HTTPURLResponse) {
        let guarded = URLSession(configuration: session.configuration, delegate: SameOriginRedirects(), delegateQueue: nil)
        defer { guarded.finishTasksAndInvalidate() }
        if resource != nil || audience != nil {
            let first = try await freshToken(resource: resource, audience: audience, minimumValidity: minimumValidity, forceRefresh: false)
            let (data, response) = try await Self.send(try authorized(request, token: first.value), session: guarded)
            guard response.statusCode == 401, Self.refusesTheToken(response), let asked = request.url, let answered = response.url, Origin(asked) == Origin(answered) else {
                return (data, response)
            }
            let second = try await freshToken(resource: resource, audience: audience, minimumValidity: minimumValidity, forceRefresh: true)
            guard second.value != first.value else { return (data, response) }
            return try await Self.send(try authorized(request, token: second.value), session: guarded)
        }
        let first = try await freshToken(minimumValidity: minimumValidity)
        let (data, response) = try await Self.send(try authorized(request, token: first.value), session: guarded)
        guard response.statusCode == 401, Self.refusesTheToken(response) else { return (data, response) }
        // Refused by a server the caller did not name (after a redirect): not about the token the caller meant.
        guard let asked = request.url, let answered = response.url, Origin(asked) == Origin(answered) else { return (data, response) }
        try markAccessTokenRejected(first.value)
        let second = try await freshToken(minimumValidity: minimumValidity)
        // No other token to be had (a stand-in user, a provider that hands back the same): the first answer stands.
        guard second.value != first.value else { return (data, response) }
        return try await Self.send(try authorized(request, token: second.value), session: guarded)
    }

    static func send(_ request: URLRequest, session: URLSession) async throws(SignInError) -> (Data, HTTPURLResponse) {
        let host = request.url?.host ?? request.url?.absoluteString ?? "the server"
        do {
            let (data, response) = try await session.data(for: request)
            guard let http = response as? HTTPURLResponse else {
                throw SignInError.networkUnavailable(endpoint: host, detail: "the answer was not HTTP")
            }
            return (data, http)
        } catch let e as SignInError {
            throw e
        } catch let e as URLError where e.code == .cancelled {
            throw .canceled(reason: "the request to \(host) was canceled")
        } catch {
            if Task.isCancelled { throw .canceled(reason: "the request to \(host) was canceled") }
            throw .networkUnavailable(endpoint: host, detail: error.localizedDescription)
        }
    }

    /// Whether a 401 is about the token: a Bearer challenge with `error="invalid_token"`, a Bearer challenge with
    /// no error code, or no challenge at all. Not: another scheme, or another error (`invalid_request`).
    static func refusesTheToken(_ response: HTTPURLResponse) -> Bool {
        guard let header = response.value(forHTTPHeaderField: "WWW-Authenticate"), !header.isEmpty else { return true }
        // Read as RFC 9110 writes it (several challenges, quoted strings, parameters in any order).
        guard let challenge = WWWAuthenticate(header).tokenChallenge, ["bearer", "dpop"].contains(challenge.scheme.lowercased()) else { return false }
        return challenge.error == nil || challenge.error == "invalid_token"
    }
}

/// A URL's origin (RFC 6454): scheme, host and port, the port spelled out when it is the scheme's default.
struct Origin: Equatable {
    let scheme: String
    let host: String
    let port: Int

    init(_ url: URL) {
        scheme = url.scheme?.lowercased() ?? ""
        host = url.host?.lowercased() ?? ""
        port = url.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : -1)
    }
}

/// Follows redirects, dropping `Authorization` and its `DPoP` proof from any that leaves the origin of the request that
/// carried them.
final class SameOriginRedirects: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void) {
        var next = request
        if let from = task.originalRequest?.url ?? response.url, let to = request.url, Origin(from) != Origin(to) {
            next.setValue(nil, forHTTPHeaderField: "Authorization")
            next.setValue(nil, forHTTPHeaderField: "DPoP")
        }
        completionHandler(next)
    }
}

extension APIAuthorizer {
    /// Sends `request` through `session` with the API's token, and acts on the answer as `decide` says: a refresh or
    /// a sign-in (where the API's challenge names another server, a step-up on 403 `insufficient_scope`, when the
    /// authorizer allows one), then the request once more. The token goes only to the origin `request` names (a
    /// redirect elsewhere is followed without it). Cancelling the calling task cancels the request (`.canceled`).
    public func perform(_ request: URLRequest, session: URLSession = .shared) async throws(SignInError) -> (Data, HTTPURLResponse) {
        let guarded = URLSession(configuration: session.configuration, delegate: SameOriginRedirects(), delegateQueue: nil)
        defer { guarded.finishTasksAndInvalidate() }
        guard let url = request.url else { throw .unsupported(reason: "a request without a URL") }
        func send() async throws(SignInError) -> (Data, HTTPURLResponse) {
            var r = request
            for (name, value) in try await headers(method: request.httpMethod ?? "GET", url: url) { r.setValue(value, forHTTPHeaderField: name) }
            return try await SignInUser.send(r, session: guarded)
        }
        let (data, response) = try await send()
        // A refusal from a server the caller did not name (after a redirect) is not about this API's token.
        guard let answered = response.url, Origin(url) == Origin(answered) else { return (data, response) }
        guard try await decide(status: response.statusCode, wwwAuthenticate: response.value(forHTTPHeaderField: "WWW-Authenticate")) == .retry else {
            return (data, response)
        }
        let (again, second) = try await send()
        // Once more at most: the answer to the retry stands, unless it asks for a sign-in this authorizer may make.
        guard try await decide(status: second.statusCode, wwwAuthenticate: second.value(forHTTPHeaderField: "WWW-Authenticate"), afterRetry: true) == .retry else {
            return (again, second)
        }
        return try await send()
    }
}
