import Foundation
import Testing
@testable import SignInKit
@testable import SignInStorage
@testable import SignInGoogle
@testable import SignInAWS

/// The derived-token cache's keys are typed, and encode as stores written before them have them: an entry's cached
/// service-account token, resource token or AWS keys are found again after an upgrade.
@Suite struct DerivedTokenKeyTests {
    @Test func everyKindEncodesAsStoresKeepIt() {
        #expect(DerivedTokenKey.resource("https://api.example/").encoded == "resource|https://api.example/")
        #expect(DerivedTokenKey.exchange(audience: "aud", resource: nil).encoded == "exchange|aud|")
        #expect(DerivedTokenKey.serviceAccountAccess(chain: ["d@p.iam.gserviceaccount.com", "sa@p.iam.gserviceaccount.com"], scopes: ["b", "a"]).encoded
                == "access|d@p.iam.gserviceaccount.com sa@p.iam.gserviceaccount.com scopes a b")
        #expect(DerivedTokenKey.serviceAccountID(chain: ["sa@p.iam.gserviceaccount.com"], audience: "https://run.app", includeEmail: false).encoded
                == "id|sa@p.iam.gserviceaccount.com audience https://run.app no-email")
        #expect(DerivedTokenKey(.awsRole, ["arn:aws:iam::123456789012:role/r", "s", "3600", "https://sts.amazonaws.com"]).encoded
                == "aws|arn:aws:iam::123456789012:role/r s 3600 https://sts.amazonaws.com")
        let f = WorkloadIdentityFederation(audience: "//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/p/providers/q")
        #expect(DerivedTokenKey(.federated, f.keyParts + ["scopes", "x"]).encoded
                == "federated|//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/p/providers/q  https://sts.googleapis.com/v1/token scopes x")
    }

    /// An entry keeps its cache under its first name, and one written with it is read back by key.
    @Test func anEntryKeepsTheCacheUnderItsFirstName() throws {
        var c = StoredCredentials(issuer: "https://issuer.example", clientID: "c", refreshToken: "r", accessToken: "a", accessTokenExpiry: nil,
                                  idToken: nil, idTokenExpiry: nil, profile: SignInProfile(userID: "u"), grantedScopes: [],
                                  endpoints: ProviderEndpoints(issuer: "https://issuer.example", authorization: "https://issuer.example/a",
                                                               token: "https://issuer.example/t", jwks: "https://issuer.example/j"))
        let expiry = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded() + 3600)
        c.keep(.resource("https://api.example/"), value: "kept", expiry: expiry)
        let data = try JSONEncoder().encode(c)
        let object = try #require(JSONValue.object(from: data))
        #expect(object["serviceAccountTokens"]?.array?.count == 1 && object["derivedTokens"] == nil)
        let read = try #require(StoredCredentials(json: object))
        #expect(read.derivedToken(.resource("https://api.example/"))?.value == "kept")
        #expect(try JSONDecoder().decode(StoredCredentials.self, from: data).derivedToken(.resource("https://api.example/"))?.expiry == expiry)
    }
}
