import Foundation
import Testing
@testable import SignInKit
@testable import SignInBase
@testable import SignInTransport
@testable import SignInProtocol
@testable import SignInStorage
@testable import SignInCLI

/// The bridges' protocols with a stand-in token source: no process, no store, no provider.
@Suite struct BridgeProtocolTests {
    final class StandIn: BridgeSource {
        let io = IOStreams.capturing().0
        var hosts = ["git.example.org", "*.example.com", "127.0.0.1:8080"]
        var marked: [String] = []
        func token(_ kind: TokenKind, _ freshness: Freshness, for target: TokenTarget) throws(SignInError) -> IssuedToken {
            IssuedToken(token: SignInToken(value: "at-1", expirationDate: Date(timeIntervalSince1970: 2_000_000_000)), kind: kind, subject: "alice", name: "alice@example.org")
        }
        func markRejected(_ token: String) throws(SignInError) { marked.append(token) }
        func gitHosts() -> [String] { hosts }
        func dockerRegistries() -> [String] { ["europe-docker.pkg.dev", "*.gcr.io", "127.0.0.1:5000"] }
        var settingsName: String { "/c.json" }
        var gitUsername: String? { nil }
        func awsCredentials(_ request: AWSRoleRequest) throws(SignInError) -> AWSCredentials {
            AWSCredentials(accessKeyID: "AKIA", secretAccessKey: "s", sessionToken: "t", expiration: Date(timeIntervalSince1970: 2_000_000_000))
        }
    }

    func git(_ op: String) throws -> GitCredential {
        try GitCredential(Arguments.parse(["git-credential", op].dropFirst().map { $0 }, for: GitCredential.spec), [:])
    }

    @Test(arguments: [
        ("git.example.org", "https", true), ("a.example.com", "https", true), ("example.com", "https", false),
        ("git.example.org.evil", "https", false), ("evil.example", "https", false), ("127.0.0.1:8080", "http", true),
        ("git.example.org", "http", false), ("", "https", false),
    ])
    func gitAnswersOnlyItsHostsAndHTTPOnlyOnLoopback(host: String, proto: String, answered: Bool) throws {
        let a = try git("get").answer(["protocol=\(proto)", "host=\(host)"], StandIn())
        if answered {
            #expect(a == BridgeAnswer(output: "username=alice@example.org\npassword=at-1\npassword_expiry_utc=2000000000\n"))
        } else {
            #expect(a.code == .usage && a.output.isEmpty && a.error != nil, "\(host) \(proto): \(a)")
        }
    }

    @Test func gitEraseMarksTheRejectedTokenAndStoreKeepsNothing() throws {
        let source = StandIn()
        #expect(try git("erase").answer(["protocol=https", "host=git.example.org", "password=at-0"], source) == BridgeAnswer())
        #expect(source.marked == ["at-0"])
        #expect(try git("store").answer(["protocol=https", "host=git.example.org", "password=x"], source) == BridgeAnswer())
        #expect(source.marked == ["at-0"])
    }

    func docker(_ op: String) throws -> DockerCredential {
        try DockerCredential(Arguments.parse([op], for: DockerCredential.spec), [:])
    }

    @Test(arguments: [
        ("europe-docker.pkg.dev", true), ("https://eu.gcr.io", true), ("127.0.0.1:5000", true), ("gcr.io.evil.example", false),
        ("docker.io", false), ("127.0.0.1:5001", false), ("", false),
    ])
    func dockerAnswersOnlyItsRegistries(registry: String, answered: Bool) throws {
        let a = try docker("get").answer(registry, StandIn())
        if answered {
            #expect(a.code == .success && a.output.contains(#""Secret":"at-1""#) && a.output.contains(#""Username":"oauth2accesstoken""#), "\(registry): \(a)")
        } else {
            #expect(a == BridgeAnswer(code: .failure, output: "credentials not found in native keychain\n"), "\(registry): \(a)")
        }
    }

    @Test func dockerListNamesTheRegistriesWithoutAPattern() throws {
        let a = try docker("list").answer("", StandIn())
        #expect(a.output.contains(#""europe-docker.pkg.dev":"oauth2accesstoken""#) && !a.output.contains("gcr.io") && !a.output.contains("at-1"), "\(a)")
    }

    func command<C: SignInCommand>(_ type: C.Type, _ args: [String]) throws -> C {
        try C(Arguments.parse(args, for: C.spec), [:])
    }

    @Test func tokenAndIDTokenPrintTheTokenOrTheirJSON() throws {
        #expect(try command(Token.self, []).answer(StandIn()) == BridgeAnswer(output: "at-1\n"))
        let json = try command(Token.self, ["--json"]).answer(StandIn()).output
        #expect(json == #"{"access_token":"at-1","expires_at":"2033-05-18T03:33:20Z","sub":"alice","token_type":"Bearer"}"# + "\n", "\(json)")
        #expect(try command(IDTokenCommand.self, []).answer(StandIn()) == BridgeAnswer(output: "at-1\n"))
    }

    @Test(arguments: [("", "client.authentication.k8s.io/v1"), (#"{"apiVersion":"client.authentication.k8s.io/v1beta1"}"#, "client.authentication.k8s.io/v1beta1"),
                      (#"{"apiVersion":"client.authentication.k8s.io/v2"}"#, "client.authentication.k8s.io/v1")])
    func kubectlAnswersTheVersionItIsAskedFor(info: String, version: String) throws {
        let env = info.isEmpty ? [:] : ["KUBERNETES_EXEC_INFO": info]
        let a = try command(KubectlCredential.self, []).answer(StandIn(), environment: env)
        #expect(a.output == #"{"apiVersion":"\#(version)","kind":"ExecCredential","status":{"expirationTimestamp":"2033-05-18T03:33:20Z","token":"at-1"}}"# + "\n", "\(a)")
    }

    @Test func awsAndGoogleExecutableSourcesSpeakTheirFormats() throws {
        let aws = try command(AWSCredentialProcess.self, ["--role-arn", "arn:aws:iam::123456789012:role/r"]).answer(StandIn(), account: nil)
        #expect(aws.output == #"{"AccessKeyId":"AKIA","Expiration":"2033-05-18T03:33:20Z","SecretAccessKey":"s","SessionToken":"t","Version":1}"# + "\n", "\(aws)")
        let google = try command(GoogleExecutableSource.self, []).answer(StandIn())
        #expect(google.failure == nil)
        #expect(google.output == #"{"expiration_time":2000000000,"id_token":"at-1","success":true,"token_type":"urn:ietf:params:oauth:token-type:id_token","version":1}"# + "\n")

        final class SignedOut: BridgeSource {
            let io = IOStreams.capturing().0
            func token(_ kind: TokenKind, _ freshness: Freshness, for target: TokenTarget) throws(SignInError) -> IssuedToken { throw .noPreviousSignIn(reason: .noStore(path: "/s")) }
            func markRejected(_ token: String) throws(SignInError) {}
            func gitHosts() -> [String] { [] }
            func dockerRegistries() -> [String] { [] }
            var settingsName: String { "/c.json" }
            var gitUsername: String? { nil }
            func awsCredentials(_ request: AWSRoleRequest) throws(SignInError) -> AWSCredentials { throw .noPreviousSignIn(reason: .noStore(path: "/s")) }
        }
        let failed = try command(GoogleExecutableSource.self, []).answer(SignedOut())
        #expect(failed.failure.map { ExitCode($0) } == .notSignedIn)
        #expect(failed.output.hasPrefix(#"{"code":"signin-exit-3","message":"Not signed in"#) && failed.output.contains(#""success":false,"version":1}"#), "\(failed.output)")
    }

    @Test func everyConsumerGetsTheTokenThroughOneRenderingThatKnowsBearerFromDPoP() throws {
        var issued = IssuedToken(token: SignInToken(value: "at-1", expirationDate: nil), kind: .access, subject: "alice", name: "alice@example.org")
        #expect(try issued.presented(to: .typed) == ("Bearer", "at-1"))
        #expect(try issued.presented(to: .bearerOnly("git (a password)")) == ("Bearer", "at-1"))
        issued.tokenType = "DPoP"
        // A protocol that says the type gets the bound token and its type; one that carries only bearer tokens is
        // refused by name, never handed a bound token as a bearer one.
        #expect(try issued.presented(to: .typed) == ("DPoP", "at-1"))
        do {
            _ = try issued.presented(to: .bearerOnly("git (a password)"))
            Issue.record("a DPoP-bound token went to git as a password")
        } catch {
            guard case .unsupported(let reason) = error else { Issue.record("\(error)"); return }
            #expect(reason.hasPrefix("git (a password) can carry only a bearer token") && !reason.contains("at-1"))
        }
        #expect(throws: SignInError.self) { try issued.bearerValue(for: "docker (a registry password)") }
    }
}
