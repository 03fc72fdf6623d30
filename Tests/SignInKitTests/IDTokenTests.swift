import Foundation
import Testing
@testable import SignInKit
@testable import SignInBase
@testable import SignInTransport
@testable import SignInProtocol
@testable import SignInStorage

@Suite struct IDTokenTests {
    static let rsa = TestKey(alg: "RS256", kid: "rsa1")
    static let ec = TestKey(alg: "ES256", kid: "ec1")
    let issuer = "https://issuer.example"
    let client = "client-123"

    func claims(_ overrides: [String: Any] = [:], drop: [String] = []) -> [String: Any] {
        let now = Int(Date().timeIntervalSince1970)
        var c: [String: Any] = ["iss": issuer, "aud": client, "sub": "alice", "exp": now + 600, "iat": now, "nonce": "n-1",
                                "name": "Alice Example", "email": "alice@example.org"]
        for (k, v) in overrides { c[k] = v }
        for k in drop { c.removeValue(forKey: k) }
        return c
    }

    var expect: IDToken.Expectations { IDToken.Expectations(issuer: issuer, clientID: client, nonce: "n-1") }

    func verify(_ raw: String, keys: [TestKey] = [rsa, ec], refetch: [TestKey]? = nil, expect e: IDToken.Expectations? = nil) throws(SignInError) -> IDToken {
        let jwks = try JWKS.parse(TestKey.jwksData(keys), endpoint: "test")
        let again = refetch ?? keys
        return try IDToken.verify(raw, jwks: jwks, refetch: { () throws(SignInError) -> JWKS in try JWKS.parse(TestKey.jwksData(again), endpoint: "test") }, expect: e ?? expect)
    }

    func refusal(_ raw: String, keys: [TestKey] = [rsa, ec], refetch: [TestKey]? = nil, expect e: IDToken.Expectations? = nil) -> String? {
        do {
            _ = try verify(raw, keys: keys, refetch: refetch, expect: e)
            return nil
        } catch {
            if case .invalidIDToken(let reason) = error { return reason }
            return "other: \(error)"
        }
    }

    @Test func acceptsRS256AndES256() throws {
        let t1 = try verify(Self.rsa.sign(claims()))
        #expect(t1.profile.displayName == "Alice Example <alice@example.org>")
        let t2 = try verify(Self.ec.sign(claims()))
        #expect(t2.subject == "alice")
    }

    @Test func acceptsAudienceListAndTheOnlyKeyWithoutKid() throws {
        let lone = TestKey(alg: "RS256", kid: nil)
        _ = try verify(lone.sign(claims(["aud": [client]])), keys: [lone])
    }

    @Test func acceptsGoogleIssuerWithoutScheme() throws {
        // The rules come from the configuration, read with SignInKit's families (Google's brings them).
        let google = try SignInConfiguration.parse(Data(#"{"client_id": "c"}"#.utf8), sourcePath: "/test.json")
        #expect(google.issuer == "https://accounts.google.com", "Google is the default issuer")
        var e = expect
        e.issuer = google.issuer
        e.issuerRules = google.providerRules
        _ = try verify(Self.rsa.sign(claims(["iss": "accounts.google.com"])), expect: e)
        #expect(refusal(Self.rsa.sign(claims(["iss": "accounts.google.com"]))) != nil)  // only for Google
    }

    /// `hosted_domain` is Google's section's: its `hd` claim is checked through the configuration's sections, and a
    /// configuration without it checks no `hd`.
    @Test func aHostedDomainIsCheckedByGooglesSection() throws {
        let c = try SignInConfiguration.parse(Data(#"{"client_id": "c", "hosted_domain": "example.org"}"#.utf8), sourcePath: "/test.json")
        var e = expect
        e.sections = c.givenSections
        _ = try verify(Self.rsa.sign(claims(["hd": "example.org"])), expect: e)
        do {
            _ = try verify(Self.rsa.sign(claims(["hd": "other.example"])), expect: e)
            Issue.record("an account of another domain was accepted")
        } catch {
            #expect("\(error)".contains("hosted domain \"example.org\""), "\(error)")
        }
        #expect(refusal(Self.rsa.sign(claims())) == nil, "no hosted domain, no hd asked for")
    }

    @Test func refusesBadSignature() {
        let raw = Self.rsa.sign(claims())
        var parts = raw.split(separator: ".").map(String.init)
        var sig = Array(Base64URL.decode(parts[2])!)
        sig[10] ^= 1
        parts[2] = Base64URL.encode(sig)
        #expect(refusal(parts.joined(separator: "."))?.contains("signature") == true)
        // A token signed by a key that is not in the JWKS under the same kid.
        let impostor = TestKey(alg: "RS256", kid: "rsa1")
        #expect(refusal(impostor.sign(claims()))?.contains("signature") == true)
    }

    @Test func refusesWrongClaims() {
        #expect(refusal(Self.rsa.sign(claims(["iss": "https://evil.example"])))?.contains("issued by") == true)
        #expect(refusal(Self.rsa.sign(claims(["aud": "other-client"])))?.contains("another client") == true)
        #expect(refusal(Self.rsa.sign(claims(["aud": ["other", client]])))?.contains("several audiences") == true)
        #expect(refusal(Self.rsa.sign(claims(["azp": "other-client"])))?.contains("azp") == true)
        // An azp that is there but not a string is refused, not ignored (it would pass an audience list otherwise).
        #expect(refusal(Self.rsa.sign(claims(["azp": [client]])))?.contains("azp) is not a string") == true)
        #expect(refusal(Self.rsa.sign(claims(["azp": 7])))?.contains("azp) is not a string") == true)
        #expect(refusal(Self.rsa.sign(claims(["azp": NSNull()])))?.contains("azp) is not a string") == true)
        #expect(refusal(Self.rsa.sign(claims(["azp": client]))) == nil)
        // Fourth review, part 9: another audience beside this client is refused even with azp = this client.
        #expect(refusal(Self.rsa.sign(claims(["aud": [client, "other-client"], "azp": client])))?.contains("several audiences") == true)
        #expect(refusal(Self.rsa.sign(claims(["aud": [client], "azp": client]))) == nil)
        #expect(refusal(Self.rsa.sign(claims(["nonce": "replayed"])))?.contains("nonce") == true)
        #expect(refusal(Self.rsa.sign(claims(drop: ["nonce"])))?.contains("nonce") == true)
        let now = Int(Date().timeIntervalSince1970)
        #expect(refusal(Self.rsa.sign(claims(["exp": now - 3600])))?.contains("expired") == true)
        #expect(refusal(Self.rsa.sign(claims(["iat": now + 3600])))?.contains("future") == true)
    }

    @Test func toleratesSmallClockSkew() throws {
        let now = Int(Date().timeIntervalSince1970)
        _ = try verify(Self.rsa.sign(claims(["exp": now - 60, "iat": now + 120])))
    }

    @Test func refusesAlgNoneAndHS256() {
        let none = Base64URL.encode(Array(#"{"alg":"none"}"#.utf8)) + "." + Base64URL.encode(try! JSONSerialization.data(withJSONObject: claims())) + "."
        #expect(refusal(none)?.contains("not accepted") == true)
        #expect(refusal(Self.rsa.sign(claims(), header: ["alg": "HS256", "kid": "rsa1"]))?.contains("not accepted") == true)
    }

    @Test func unknownKidRefetchesOnce() throws {
        let rotated = TestKey(alg: "RS256", kid: "new")
        // Not in the first key set, present after the refetch: accepted.
        _ = try verify(rotated.sign(claims()), keys: [Self.rsa], refetch: [Self.rsa, rotated])
        // Not present even after the refetch: refused, naming the kid.
        #expect(refusal(rotated.sign(claims()), keys: [Self.rsa], refetch: [Self.rsa])?.contains("kid \"new\"") == true)
    }

    @Test func refusesGarbage() {
        for raw in ["", "a.b", "a.b.c.d", "!!!.e30.e30", "e30.!!!.e30", String(repeating: "a", count: 70_000)] {
            #expect(refusal(raw) != nil, "\(raw.prefix(20))")
        }
    }
}
