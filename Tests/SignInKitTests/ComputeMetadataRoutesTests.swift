import Foundation
import Testing
@testable import SignInKit
@testable import SignInGoogle
@testable import SignInBase
@testable import SignInTransport
@testable import SignInProtocol
@testable import SignInStorage

/// The metadata server's routes and manners with a stand-in source: no socket, no store, no provider.
@Suite struct ComputeMetadataRoutesTests {
    struct StandIn: ComputeMetadataSource {
        var project: String? = "p"
        var number: Result<String?, SignInError> = .success("42")
        func email() throws(SignInError) -> String { "alice@example.org" }
        func scopes() throws(SignInError) -> [String] { ["openid", "email"] }
        func accessToken(scopes: [String]?) throws(SignInError) -> IssuedToken {
            if let scopes, scopes.contains("drive") { throw .unsupported(reason: "not granted: drive") }
            return IssuedToken(token: SignInToken(value: "at-1", expirationDate: Date(timeIntervalSinceNow: 3600)), kind: .access, subject: "alice", name: "alice@example.org")
        }
        func idToken(audience: String, full: Bool) throws(SignInError) -> SignInToken {
            guard audience == "me" else { throw .unsupported(reason: "an ID token for \(audience) needs a service account") }
            return SignInToken(value: "h.p.s", expirationDate: nil)
        }
        func projectID() -> String? { project }
        func numericProjectID() throws(SignInError) -> String? { try number.get() }
    }

    func ask(_ path: String, _ source: StandIn = StandIn(), flavor: Bool = true, headers: [HTTPRequestHead.Field] = []) -> (LoopbackResponse, ComputeMetadataHandler.Outcome) {
        let parts = path.split(separator: "?", maxSplits: 1)
        var r = HTTPRequestHead(method: "GET", path: String(parts[0]), query: parts.count > 1 ? parts[1] : "", host: "127.0.0.1:1")
        if flavor { r.fields.append(.init(name: "metadata-flavor", value: "Google")) }
        r.fields += headers
        return ComputeMetadataHandler(source: source).answer(r)
    }

    func body(_ r: LoopbackResponse) -> String { String(decoding: r.body, as: UTF8.self) }

    @Test func theTokenAndTheAccountAreServedWithTheRealServersManners() {
        let (token, outcome) = ask("/computeMetadata/v1/instance/service-accounts/default/token")
        #expect(token.status == "200 OK" && outcome == .served && body(token).contains("\"access_token\":\"at-1\""))
        #expect(token.headers.contains { $0 == ("Metadata-Flavor", "Google") })
        #expect(body(ask("/computeMetadata/v1/instance/service-accounts/default/email").0) == "alice@example.org")
        #expect(body(ask("/computeMetadata/v1/project/numeric-project-id").0) == "42")
        #expect(ask("/computeMetadata/v1/instance/zone").0.status.hasPrefix("404"))
    }

    @Test func refusalsAndDeclines() {
        #expect(ask("/computeMetadata/v1/instance/service-accounts/default/token", flavor: false).0.status.hasPrefix("403"))
        #expect(ask("/computeMetadata/v1/instance/service-accounts/default/token", headers: [.init(name: "x-forwarded-for", value: "1.2.3.4")]).0.status.hasPrefix("403"))
        let other = ask("/computeMetadata/v1/instance/service-accounts/default/identity?audience=https://svc")
        #expect(other.0.status.hasPrefix("404") && other.1 == .declined && body(other.0).contains("needs a service account"))
        let scope = ask("/computeMetadata/v1/instance/service-accounts/default/token?scopes=drive")
        #expect(scope.0.status.hasPrefix("400") && scope.1 == .declined)
        #expect(ask("/computeMetadata/v1/project/project-id", StandIn(project: nil)).0.status.hasPrefix("404"))
    }

    @Test func aProjectNumberThatCannotBeLookedUpSaysToSetIt() {
        let unreachable = StandIn(number: .failure(.networkUnavailable(endpoint: "Cloud Resource Manager API", detail: "refused")))
        let (r, outcome) = ask("/computeMetadata/v1/project/numeric-project-id", unreachable)
        #expect(r.status.hasPrefix("502") && body(r).contains("project_number"), "\(body(r))")
        if case .failed = outcome {} else { Issue.record("\(outcome)") }
    }
}
