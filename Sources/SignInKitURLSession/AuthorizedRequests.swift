// SignInKit's requests through URLSession (FoundationNetworking on Linux), in a module of its own: importing
// Foundation's networking costs start-up time that the `signin` command, which never uses it, must not pay.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import SignInKit

extension SignInUserProtocol {
    /// `request` with `Authorization: Bearer <token>`, the token valid for at least `minimumValidity` more
    /// (refreshed only when needed).
    public func authorize(_ request: URLRequest, minimumValidity: Duration = .seconds(60)) async throws(SignInError) -> URLRequest {
        var r = request
        r.setValue(try await authorizationHeaderValue(minimumValidity: minimumValidity), forHTTPHeaderField: "Authorization")
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
    public func perform(_ request: URLRequest, session: URLSession = .shared, minimumValidity: Duration = .seconds(60)) async throws(SignInError) -> (Data, HTTPURLResponse) {
        let first = try await freshToken(minimumValidity: minimumValidity)
        let (data, response) = try await Self.send(request, token: first.value, session: session)
        guard response.statusCode == 401, Self.refusesTheToken(response) else { return (data, response) }
        try markAccessTokenRejected(first.value)
        let second = try await freshToken(minimumValidity: minimumValidity)
        // No other token to be had (a stand-in user, a provider that hands back the same): the first answer stands.
        guard second.value != first.value else { return (data, response) }
        return try await Self.send(request, token: second.value, session: session)
    }

    static func send(_ request: URLRequest, token: String, session: URLSession) async throws(SignInError) -> (Data, HTTPURLResponse) {
        var r = request
        r.setValue("Bearer " + token, forHTTPHeaderField: "Authorization")
        let host = request.url?.host ?? request.url?.absoluteString ?? "the server"
        do {
            let (data, response) = try await session.data(for: r)
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
        guard let challenge = response.value(forHTTPHeaderField: "WWW-Authenticate"), !challenge.isEmpty else { return true }
        let lower = challenge.lowercased()
        guard lower.hasPrefix("bearer") else { return false }
        guard let range = lower.range(of: "error=") else { return true }
        return lower[range.upperBound...].trimmingCharacters(in: CharacterSet(charactersIn: "\" ")).hasPrefix("invalid_token")
    }
}
