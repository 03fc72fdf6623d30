import Foundation
import Testing
@testable import SignInKit
@testable import SignInBase
@testable import SignInProtocol

/// The decision of which configuration a command for one API uses, asked without a process and without a server:
/// the branches that need no network.
@Suite struct APICommandConfigurationTests {
    static func emptyStore() throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("signin-apicommand-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        return dir
    }

    static func never(_ detail: String) -> Bool {
        Issue.record("no server change was to be confirmed")
        return false
    }

    @Test func theFilesOwnResourcesAndPlainCommandsUseTheFile() throws {
        let store = try Self.emptyStore()
        defer { try? FileManager.default.removeItem(atPath: store) }
        var loaded = SignInConfiguration(clientID: "mine", issuer: "https://idp.example")
        loaded.resources = ["https://api.example/listed"]
        for resource in [nil, "https://api.example/listed"] {
            for signsIn in [false, true] {
                let c = try APICommandConfiguration.withProvider(loaded, .init(resource: resource, signsIn: signsIn, addedScopes: []), storeDirectory: store,
                                                                 environment: [:], confirmServerChange: Self.never)
                #expect(c.clientID == "mine" && c.issuer == "https://idp.example")
            }
        }
    }

    /// An API the file does not list, never signed in to: a command that does not sign in is not signed in (exit 3),
    /// and the store is not even looked for by a command that needs no API.
    @Test func anAPIThatIsNotListedAndNeverSignedInIsNotSignedIn() throws {
        let store = try Self.emptyStore()
        defer { try? FileManager.default.removeItem(atPath: store) }
        let loaded = SignInConfiguration(clientID: "mine", issuer: "https://idp.example")
        let api = "https://127.0.0.1:1/unlisted"
        var refusal: SignInError?
        do throws(SignInError) {
            _ = try APICommandConfiguration.withProvider(loaded, .init(resource: api, signsIn: false, addedScopes: []), storeDirectory: store,
                                                         environment: [:], confirmServerChange: Self.never)
        } catch { refusal = error }
        let error = refusal
        #expect(error == APICommandConfiguration.notSignedIn(to: api))
        #expect(ExitCodeOf.notSignedIn(error))
        var asked = false
        _ = try APICommandConfiguration.withProvider(loaded, .init(resource: nil, signsIn: false, addedScopes: []), storeDirectory: { asked = true; return store }(),
                                                     environment: [:], confirmServerChange: Self.never)
        #expect(!asked, "a command with no API does not look for the store")
    }

    @Test func withNoProviderAndNoAPISignedInThereIsNothing() throws {
        let store = try Self.emptyStore()
        defer { try? FileManager.default.removeItem(atPath: store) }
        #expect(try APICommandConfiguration.onlyAPISignIn(store, file: "/nowhere/config.json") == nil)
        #expect(try APICommandConfiguration.withoutProvider(.init(resource: nil, signsIn: false, addedScopes: []), file: "/nowhere/config.json",
                                                            storeDirectory: store, environment: [:], httpTimeout: .seconds(1), network: NetworkSettings(), document: nil,
                                                            confirmServerChange: Self.never) == nil)
    }

    /// The whole tree from the file's path: a file that is not there is what is missing, named; a file with only a client
    /// ID metadata document and no API signed in lacks its `client_id`; a plain file is the configuration, and finding
    /// it never looks for the store.
    @Test func resolveReadsTheFileAndSaysWhatIsMissingByName() throws {
        let store = try Self.emptyStore()
        defer { try? FileManager.default.removeItem(atPath: store) }
        let plain = APICommandConfiguration.Command(resource: nil, signsIn: false, addedScopes: [])
        func resolve(_ path: String, named: Bool, asked: inout Bool) -> Result<SignInConfiguration, SignInError> {
            var looked = false
            defer { asked = looked }
            do throws(SignInError) {
                return .success(try APICommandConfiguration.resolve(path: path, named: { named }, plain, storeDirectory: { looked = true; return store },
                                                                    environment: [:], confirmServerChange: Self.never))
            } catch { return .failure(error) }
        }
        var asked = false
        let missing = store + "/missing.json"
        for named in [false, true] {
            guard case .failure(.configNotFound(let file)) = resolve(missing, named: named, asked: &asked) else {
                Issue.record("a missing file was not refused as missing"); return
            }
            #expect(file == missing)
            #expect(asked == !named, "only a file not named on purpose looks for an API's sign-in in the store")
        }
        let documentOnly = store + "/document.json"
        try Data(#"{"client_id_metadata_document": "https://client.example/signin.json"}"#.utf8).write(to: URL(fileURLWithPath: documentOnly))
        guard case .failure(.configInvalid(let file, let field, _)) = resolve(documentOnly, named: true, asked: &asked) else {
            Issue.record("a document-only file with no API signed in was not refused"); return
        }
        #expect(file == documentOnly && field == "client_id")
        let ordinary = store + "/ordinary.json"
        try Data(#"{"client_id": "mine", "issuer": "https://idp.example"}"#.utf8).write(to: URL(fileURLWithPath: ordinary))
        guard case .success(let c) = resolve(ordinary, named: false, asked: &asked) else { Issue.record("the file was not used"); return }
        #expect(c.clientID == "mine" && c.issuer == "https://idp.example" && c.sourcePath == ordinary)
        #expect(!asked, "a file of its own with no API named does not look for the store")
    }
}

/// Whether an error is the "not signed in" kind (exit 3 at the command line).
enum ExitCodeOf {
    static func notSignedIn(_ e: SignInError?) -> Bool {
        if case .noPreviousSignIn? = e { return true }
        return false
    }
}
