import Foundation
import Testing

/// Revocation found where providers list it, and refused before anything changes where there is none.
@Suite struct RevocationTests {
    /// Django OAuth Toolkit lists its revocation endpoint only in RFC 8414 metadata.
    @Test func revocationIsFoundInAuthorizationServerMetadata() throws {
        let strict = try Provider(script: "strict_provider.py", environment: ["STRICT_DISCOVERY": #"{"revocation_endpoint": null}"#, "STRICT_AS_METADATA": "1"])
        let box = try strict.signedInSandbox()
        let r = try box.signin("logout", "--revoke")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try strict.stats(box.clientID)["revocations"] as? Int == 1)
        #expect(box.entryFile() == nil)
    }

    /// With no revocation endpoint anywhere, `logout --revoke` changes nothing and says what to do.
    @Test func logoutRevokeWithNoEndpointChangesNothing() throws {
        let strict = try Provider(script: "strict_provider.py", environment: ["STRICT_DISCOVERY": #"{"revocation_endpoint": null}"#])
        let box = try strict.signedInSandbox()
        let before = box.storeSnapshot()
        let r = try box.signin("logout", "--revoke")
        #expect(r.status == 2, "\(r.stderr)")
        #expect(r.stderr.contains("revocation_endpoint") && r.stderr.contains("nothing was changed"), "\(r.stderr)")
        #expect(box.storeSnapshot() == before)
        #expect(try box.signin("token").status == 0)
    }
}
