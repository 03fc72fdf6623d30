import Foundation
import Testing

/// Service-account impersonation through the strict provider's IAM Service Account Credentials stand-in.
@Suite struct ImpersonationTests {
    static let sa = GoogleShape.serviceAccount

    @Test func tokenMintsTheServiceAccountsTokenOnceAndKeepsItEncrypted() throws {
        let strict = try Shared.strict.get()
        let box = try GoogleShape.sandbox(strict, settings: ["sa_allowed": [Self.sa]])
        let person = try box.signin("token").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let first = try box.signin("token", "--impersonate-service-account", Self.sa)
        #expect(first.status == 0, "\(first.stderr)")
        let minted = first.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(minted.hasPrefix("sa-at-") && minted != person)
        let again = try box.signin("token", "--impersonate-service-account", Self.sa, "--json")
        #expect(GoogleShape.json(again.stdout)["access_token"] as? String == minted)
        #expect(GoogleShape.json(again.stdout)["sub"] as? String == Self.sa)
        let stats = try strict.stats(box.clientID)
        #expect(stats["iam_calls"] as? Int == 1, "cached until near expiry")
        #expect(stats["sa_scopes"] as? [String] == [GoogleShape.cloudPlatform])
        for (name, data) in box.storeSnapshot() { #expect(!data.contains(minted), "\(name) holds the service account's token in clear") }
        // The configuration's impersonate_service_account does the same, and exec hands the token to a command.
        var config = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: box.configPath))) as! [String: Any]
        config["impersonate_service_account"] = Self.sa
        try box.writeConfig(config)
        #expect(try box.signin("token").stdout.trimmingCharacters(in: .whitespacesAndNewlines) == minted)
        #expect(try box.signin("exec", "--", "/bin/sh", "-c", "printf %s \"$SIGNIN_ACCESS_TOKEN\"").stdout == minted)
    }

    @Test func toolsUnderTheMetadataServerSeeTheServiceAccount() throws {
        let strict = try Shared.strict.get()
        let box = try GoogleShape.sandbox(strict, settings: ["sa_allowed": [Self.sa]])
        let auth = try box.signin("exec", "--gce-metadata", "--impersonate-service-account", Self.sa, "--", Paths.python, GoogleShape.googleAuthScript)
        #expect(auth.status == 0, "\(auth.stderr)")
        let o = GoogleShape.json(auth.stdout)
        #expect((o["token"] as? String)?.hasPrefix("sa-at-") == true)
        #expect(o["email"] as? String == Self.sa)
        if FileManager.default.isExecutableFile(atPath: GoogleShape.gcloud) {
            let list = try box.signin("exec", "--gce-metadata", "--impersonate-service-account", Self.sa, "--", GoogleShape.gcloud, "auth", "list", "--format=value(account)")
            #expect(list.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == Self.sa, "\(list.stderr)")
            let printed = try box.signin("exec", "--gce-metadata", "--impersonate-service-account", Self.sa, "--", GoogleShape.gcloud, "auth", "print-access-token")
            #expect(printed.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == o["token"] as? String, "\(printed.stderr)")
        }
        // The service account's ID token for any audience, from the server and from `id-token`.
        let id = try box.signin("exec", "--gce-metadata", "--impersonate-service-account", Self.sa, "--", "/bin/sh", "-c",
                                "curl -s -H 'Metadata-Flavor: Google' \"http://$GCE_METADATA_HOST/computeMetadata/v1/instance/service-accounts/default/identity?audience=https://svc.example&format=full\"")
        let direct = try box.signin("id-token", "--impersonate-service-account", Self.sa, "--audience", "https://svc.example", "--json")
        #expect(direct.status == 0, "\(direct.stderr)")
        let c = (GoogleShape.json(direct.stdout)["claims"] as? [String: Any]) ?? [:]
        #expect(c["aud"] as? String == "https://svc.example" && c["email"] as? String == Self.sa)
        #expect(id.stdout.split(separator: ".").count == 3, "\(id.stdout)")
    }

    @Test func aDelegationChainIsPassedAndARefusalNamesTheAccountAndTheRole() throws {
        let strict = try Shared.strict.get()
        let hop = "hop@test-project.iam.gserviceaccount.com"
        let box = try GoogleShape.sandbox(strict, settings: ["sa_allowed": [hop, Self.sa], "sa_missing": ["ghost@test-project.iam.gserviceaccount.com"]])
        let chained = try box.signin("token", "--impersonate-service-account", "\(hop),\(Self.sa)")
        #expect(chained.status == 0, "\(chained.stderr)")
        #expect(try strict.stats(box.clientID)["iam_last_delegates"] as? [String] == ["projects/-/serviceAccounts/\(hop)"])
        let denied = try box.signin("token", "--impersonate-service-account", "intruder@test-project.iam.gserviceaccount.com")
        #expect(denied.status == 5 && denied.stdout.isEmpty)
        #expect(denied.stderr.contains("not allowed to impersonate intruder@test-project.iam.gserviceaccount.com") && denied.stderr.contains("roles/iam.serviceAccountTokenCreator"), "\(denied.stderr)")
        let ghost = try box.signin("token", "--impersonate-service-account", "ghost@test-project.iam.gserviceaccount.com")
        #expect(ghost.status == 5 && ghost.stderr.contains("no service account ghost@test-project.iam.gserviceaccount.com"), "\(ghost.stderr)")
        let bad = try box.signin("token", "--impersonate-service-account", "not an email")
        #expect(bad.status == 2 && bad.stderr.contains("is not a service account's e-mail"))
        // The person's ID token has one audience, their client: another one needs a service account.
        let person = try box.signin("id-token", "--audience", "https://svc.example")
        #expect(person.status == 2 && person.stderr.contains("needs a service account"), "\(person.stderr)")
        #expect(try box.signin("id-token", "--audience", box.clientID).status == 0)
    }
}
