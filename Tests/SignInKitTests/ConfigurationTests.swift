import Foundation
import Testing
@testable import SignInKit
@testable import SignInBase
@testable import SignInTransport
@testable import SignInProtocol
@testable import SignInStorage
@testable import SignInCLI

@Suite struct ConfigurationTests {
    func parse(_ json: String) throws(SignInError) -> SignInConfiguration {
        try SignInConfiguration.parse(Data(json.utf8), sourcePath: "/etc/test.json")
    }

    func error(_ json: String) -> (field: String?, reason: String)? {
        do {
            _ = try parse(json)
            return nil
        } catch {
            guard case .configInvalid(let file, let field, let reason) = error, file == "/etc/test.json" else { return (nil, "wrong error \(error)") }
            return (field, reason)
        }
    }

    /// A file an administrator deploys for a company network, with no client of its own: only `ca_file` (and a timeout,
    /// where the store key lives) configures API sign-ins alone; a provider's key without `client_id` is still the
    /// client_id missing.
    @Test func aFileHoldingOnlyCAFileConfiguresAPISignInsAlone() throws {
        let ca = NSTemporaryDirectory() + "signin-ca-\(UUID().uuidString).pem"
        try Data("-----BEGIN CERTIFICATE-----\n".utf8).write(to: URL(fileURLWithPath: ca))
        defer { try? FileManager.default.removeItem(atPath: ca) }
        let c = try parse(#"{"ca_file": "\#(ca)", "http_timeout": 20, "key_storage": "file"}"#)
        #expect(c.isForAPIsOnly && c.caFile == ca && c.clientID.isEmpty)
        #expect(error(#"{"ca_file": "\#(ca)", "issuer": "https://idp.example"}"#)?.field == "client_id")
        #expect(error(#"{"key_storage": "file"}"#)?.field == "client_id")
        #expect(try !parse(#"{"client_id": "c", "ca_file": "\#(ca)"}"#).isForAPIsOnly)
        // A proxy for programs started without the environment: its address checked, named when wrong.
        let proxied = try parse(#"{"ca_file": "\#(ca)", "proxy": "http://proxy.corp.example:3128"}"#)
        #expect(proxied.isForAPIsOnly && proxied.network == NetworkSettings(caFile: ca, proxy: "http://proxy.corp.example:3128"))
        #expect(error(#"{"client_id": "c", "proxy": "proxy.corp.example:3128"}"#)?.field == "proxy")
        #expect(error(#"{"client_id": "c", "proxy": "http://"}"#)?.field == "proxy")
    }

    /// a misspelt key is named with the one it is close to, as commands and options are.
    @Test func aMisspeltKeySaysWhatItMayMean() {
        do {
            _ = try SignInConfiguration.parse(Data(#"{"client_id": "c", "redirect_prot": 8080}"#.utf8), sourcePath: "c.json")
            Issue.record("accepted")
        } catch {
            #expect(error.description.contains("redirect_prot") && error.description.contains("did you mean \"redirect_port\""), "\(error)")
        }
    }

    /// A GitHub-style app: endpoints by hand and no issuer is its own provider, not Google.
    @Test func endpointsWithoutAnIssuerAreTheirOwnProvider() throws {
        let c = try parse(#"{"client_id": "Iv1.abc", "authorization_endpoint": "https://github.example/login/oauth/authorize", "token_endpoint": "https://github.example/login/oauth/access_token", "scopes": ["read:user"]}"#)
        #expect(c.issuer == "https://github.example" && !c.isGoogle, "\(c.issuer)")
        #expect(c.providerRules.issuer == "https://github.example", "no Google rules (access_type=offline) for it")
        let google = try parse(#"{"client_id": "1.apps.googleusercontent.com", "authorization_endpoint": "https://accounts.google.com/o/oauth2/v2/auth", "token_endpoint": "https://oauth2.googleapis.com/token"}"#)
        #expect(google.isGoogle)
    }

    /// The core knows no provider by name: Google's rules and its place as the default come from Google's family
    /// (its configuration section). Read without the families, a file that names no issuer is refused naming the
    /// field, and Google's issuer gets no Google parameters; a configuration built in code gets the default
    /// provider from the client that takes it.
    @Test func theDefaultProviderAndItsRulesComeFromItsFamily() throws {
        do {
            _ = try SignInConfiguration.parse(Data(#"{"client_id": "x"}"#.utf8), sourcePath: "/etc/test.json", sections: [])
            Issue.record("a configuration without issuer was read without any family to name a default")
        } catch {
            guard case .configInvalid(_, "issuer", let reason) = error else { Issue.record("\(error)"); return }
            #expect(reason.contains("missing"))
        }
        let bare = try SignInConfiguration.parse(Data(#"{"client_id": "x", "issuer": "https://accounts.google.com"}"#.utf8), sourcePath: "/etc/test.json", sections: [])
        #expect(bare.providerRules.authorizationParameters.isEmpty && bare.providerRules.defaultDockerRegistries.isEmpty)
        let read = try parse(#"{"client_id": "x", "issuer": "https://accounts.google.com/"}"#)
        #expect(read.issuer == "https://accounts.google.com", "Google's other spelling, made canonical by its family")
        #expect(read.providerRules.authorizationParameters.contains { $0 == ("access_type", "offline") })
        #expect(DockerRegistries.patterns(for: read) == GoogleProvider.dockerRegistries && GitHosts.patterns(for: read).contains("*.googlesource.com"))
        let inCode = SignInConfiguration(clientID: "x")
        #expect(inCode.issuer.isEmpty, "no default before a client takes it")
        let client = SignInClient(configuration: inCode, storage: InMemoryCredentialStorage())
        #expect(client.configuration.issuer == "https://accounts.google.com" && client.configuration.isGoogle)
        let other = SignInClient(configuration: SignInConfiguration(clientID: "x", issuer: "https://idp.example"), storage: InMemoryCredentialStorage())
        #expect(other.configuration.issuer == "https://idp.example" && other.configuration.providerRules.authorizationParameters.isEmpty)
    }

    @Test func defaultsAreGoogle() throws {
        let c = try parse(#"{"client_id": "123.apps.googleusercontent.com"}"#)
        #expect(c.issuer == "https://accounts.google.com")
        #expect(c.isGoogle)
        #expect(c.scopes == ["openid", "email", "profile"])
        #expect(c.redirectPort == 0)
    }

    /// The example is valid in every field, but its placeholder client ID is refused with the console step.
    @Test func exampleConfigParsesOnceItsClientIDIsReal() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("config.example.json")
        do {
            _ = try SignInConfiguration.load(path: url.path)
            Issue.record("the placeholder client ID was accepted")
        } catch {
            guard case .configInvalid(_, "client_id", let reason) = error else { Issue.record("\(error)"); return }
            #expect(reason.contains("console.cloud.google.com"))
        }
        let text = try String(contentsOf: url, encoding: .utf8).replacing("1234567890-abcdefghijklmnopqrstuvwxyz012345", with: "42-mine")
        let c = try parse(text)
        #expect(c.isGoogle)
        #expect(c.clientSecret != nil)
    }

    @Test func invalidJSONSaysWhereAndTypesAreNotCoerced() {
        #expect(message("{\"client_id\": \"c\",\n  \"scopes\": [\"openid\" \"email\"]\n}")?.contains("line 2, column 23") == true)
        #expect(message(#"{"client_id": "c" "issuer": "x"}"#)?.contains("line 1, column 19") == true)
        #expect(message("{\n\"client_id\": \"c,\n\"issuer\": \"x\"}")?.contains("line 2, column 17") == true)
        // What only the strict grammar refuses is located too, not called "not a JSON object".
        #expect(message("{\"client_id\": \"c\",\n \"redirect_port\": 08}")?.contains("line 2, column 20: a malformed number") == true)
        #expect(message(#"{"client_id": "c\x"}"#)?.contains("line 1, column 17: an unknown escape") == true)
        #expect(message(#"{"client_id": "c", "redirect_port": "8765"}"#)?.contains("redirect_port") == true)
        #expect(message(#"{"client_id": "c", "http_timeout": "30"}"#)?.contains("http_timeout") == true)
        #expect(message(#"["client_id"]"#)?.contains("not a JSON object") == true)
    }

    func message(_ json: String) -> String? {
        do {
            _ = try parse(json)
            return nil
        } catch {
            return error.description
        }
    }

    /// A field given twice is an error naming it and its line, not "the first one counts".
    @Test func aFieldGivenTwiceIsRefusedWithItsLine() {
        let e = error("{\"client_id\": \"a\",\n \"issuer\": \"https://a.example\",\n \"issuer\": \"https://b.example\"}")
        #expect(e?.reason.contains("\"issuer\" appears twice") == true && e?.reason.contains("line 3") == true, "\(String(describing: e))")
    }

    @Test func errorsNameTheField() {
        #expect(error(#"{}"#)?.field == "client_id")
        #expect(error(#"{"client_id": "x", "colour": 1}"#)?.field == "colour")
        #expect(error(#"{"client_id": 5}"#)?.field == "client_id")
        #expect(error(#"{"client_id": "x", "redirect_port": 70000}"#)?.field == "redirect_port")
        #expect(error(#"{"client_id": "x", "redirect_port": 1.5}"#)?.field == "redirect_port")
        #expect(error(#"{"client_id": "x", "scopes": [1]}"#)?.field == "scopes")
        #expect(error(#"{"client_id": "x", "issuer": "ftp://x"}"#)?.field == "issuer")
        #expect(error(#"{"client_id": "x", "redirect_path": "cb"}"#)?.field == "redirect_path")
        #expect(error(#"{"client_id": "x", "extra_authorization_parameters": {"state": "x"}}"#)?.field == "extra_authorization_parameters")
        #expect(error(#"{"client_id": "x", "ca_file": "relative.pem"}"#)?.field == "ca_file")
        #expect(error(#"{"client_id": "x", "ca_file": "/nonexistent/ca.pem"}"#)?.field == "ca_file")
        #expect(error(#"{"client_id": "x", "http_timeout": 0}"#)?.field == "http_timeout")
        #expect(error("[1,2]") != nil)
        #expect(error("") != nil)
        #expect(error("\u{ff}\u{fe}") != nil)
    }

    /// each part of the file is read by its own section, the core naming none of them; a section the file
    /// gives none of its keys is its defaults, and one it does is read and checked as before.
    @Test func eachSectionReadsItsOwnKeysAndTheCoreNoneOfThem() throws {
        let file = #"{"client_id": "x", "git_hosts": ["Git.Example.com"], "git_resources": {"git.example.com": "https://git.example.com/"}, "docker_registries": ["127.0.0.1:5000"], "git_username": "me", "aws_region": "eu-west-1", "key_storage": "file"}"#
        let c = try parse(file)
        #expect(c.bridges.gitHosts == ["git.example.com"] && c.gitResources == ["git.example.com": "https://git.example.com/"])
        #expect(c.dockerRegistries == ["127.0.0.1:5000"] && c.gitUsername == "me" && c.awsRegion == "eu-west-1" && c.keyStorage == .file)
        // The core alone knows none of them: each is refused there as a key nobody owns.
        for key in ["git_hosts", "docker_registries", "aws_region", "key_storage", "impersonate_service_account"] {
            do {
                _ = try SignInConfiguration.parse(Data(#"{"client_id": "x", "\#(key)": "v"}"#.utf8), sourcePath: "/etc/test.json", sections: [])
                Issue.record("the core read \(key)")
            } catch {
                guard case .configInvalid(_, let field, let reason) = error else { Issue.record("\(error)"); continue }
                #expect(field == key && reason.contains("unknown field"))
            }
        }
        // Absent: the section's defaults (the provider's patterns decide); present and wrong: named, as before.
        #expect(try parse(#"{"client_id": "x"}"#).bridges == BridgeSettings())
        #expect(error(#"{"client_id": "x", "git_hosts": "git.example.com"}"#)?.field == "git_hosts")
        #expect(error(#"{"client_id": "x", "docker_registries": ["a b"]}"#)?.field == "docker_registries")
        #expect(error(#"{"client_id": "x", "git_resources": {"git.example.com": "not a uri"}}"#)?.field == "git_resources")
        #expect(error(#"{"client_id": "x", "git_username": ""}"#)?.field == "git_username")
    }

    @Test func pathResolution() {
        #expect(SignInConfiguration.defaultPath(explicit: "/a", environment: ["SIGNIN_CONFIG": "/b"]) == "/a")
        #expect(SignInConfiguration.defaultPath(explicit: nil, environment: ["SIGNIN_CONFIG": "/b"]) == "/b")
        #expect(SignInConfiguration.defaultPath(explicit: nil, environment: ["XDG_CONFIG_HOME": "/x", "HOME": "/h"]) == "/x/signin/config.json")
        #expect(SignInConfiguration.defaultPath(explicit: nil, environment: ["HOME": "/h"]) == "/h/.config/signin/config.json")
    }

    @Test func googleAuthorizationRequestAsksForOfflineAccess() throws {
        var c = try parse(#"{"client_id": "cid", "login_hint": "a@b.c", "hosted_domain": "b.c"}"#)
        c.extraAuthorizationParameters = ["prompt": "consent"]
        let e = ProviderEndpoints(issuer: c.issuer, authorization: "https://accounts.google.com/o/oauth2/v2/auth", token: "https://t", jwks: "https://j")
        let r = try AuthorizationRequest(config: c, endpoints: e, redirectURI: "http://127.0.0.1:1234/callback", scopes: c.scopes, loginHint: nil)
        for part in ["access_type=offline", "include_granted_scopes=true", "code_challenge_method=S256", "login_hint=a%40b.c", "hd=b.c",
                     "prompt=consent", "redirect_uri=http%3A%2F%2F127.0.0.1%3A1234%2Fcallback"] {
            #expect(r.url.contains(part), "\(part)")
        }
        #expect(r.state.count >= 22 && r.nonce.count >= 22)  // >= 128 bits
        let other = try AuthorizationRequest(config: c, endpoints: e, redirectURI: "x", scopes: c.scopes, loginHint: nil)
        #expect(other.state != r.state && other.nonce != r.nonce)
    }
}
