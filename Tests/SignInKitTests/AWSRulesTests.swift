import Foundation
import Testing
@testable import SignInKit
@testable import SignInAWS
@testable import SignInBase
@testable import SignInTransport
@testable import SignInProtocol
@testable import SignInStorage
@testable import SignInGrant
@testable import SignInCLI

/// The AWS pieces that need no STS: the profile file's editing, the command line aws-cli splits, STS's answers
/// read without an XML library, its refusals as errors that say what to fix, and the request's own checks.
@Suite struct AWSRulesTests {
    @Test func aProfileIsAddedOrItsCredentialProcessReplacedAndEverythingElseStays() throws {
        var f = AWSConfigFile("")
        try f.set("credential_process", "signin x", profile: "default")
        #expect(f.text == "[default]\ncredential_process = signin x\n")

        f = AWSConfigFile("# mine\n[profile dev]\nregion = eu-west-1\ncredential_process = old\n\n[profile other]\noutput = json\n")
        #expect(try f.set("credential_process", "new", profile: "dev") == "credential_process = old")
        try f.set("region", "us-east-2", profile: "dev", onlyIfAbsent: true)
        try f.set("credential_process", "p", profile: "other")
        #expect(f.text == "# mine\n[profile dev]\nregion = eu-west-1\ncredential_process = new\n\n[profile other]\noutput = json\ncredential_process = p\n")

        // `[dev]` is not the profile dev (aws-cli reads only `[profile dev]` in this file); a commented key is no key.
        f = AWSConfigFile("[dev]\ncredential_process = x\n[profile dev]\n# credential_process = y\n")
        try f.set("credential_process", "z", profile: "dev")
        #expect(f.text == "[dev]\ncredential_process = x\n[profile dev]\n# credential_process = y\ncredential_process = z\n")
    }

    /// Fifth review, item 3: a value with a line break would add a section of its own (a profile whose
    /// credential_process runs any command); it is refused and the file is left as it was.
    @Test func aValueWithALineBreakIsRefusedAndNothingIsWritten() {
        var f = AWSConfigFile("[profile dev]\nregion = eu-west-1\n")
        let evil = "/usr/bin/signin -c x\n[profile evil]\ncredential_process = sh -c id"
        #expect(throws: SignInError.self) { try f.set("credential_process", evil, profile: "dev") }
        #expect(throws: SignInError.self) { try f.set("region", "us\r", profile: "dev") }
        #expect(throws: SignInError.self) { try f.set("region", "us", profile: "a\u{2028}b") }
        #expect(f.text == "[profile dev]\nregion = eu-west-1\n")
    }

    @Test func theCommandLineSurvivesAWSShellSplitting() {
        #expect(AWSConfigFile.commandLine(["/usr/bin/signin", "aws-credential-process", "--role-arn", "arn:aws:iam::1:role/a"])
                == "/usr/bin/signin aws-credential-process --role-arn arn:aws:iam::1:role/a")
        #expect(AWSConfigFile.commandLine(["/home/a b/signin", "-c", "it's.json", ""]) == #"'/home/a b/signin' -c 'it'"'"'s.json' ''"#)
    }

    @Test func stsAnswersAreReadAndItsRefusalsSayWhatToFix() throws {
        let ok = XMLElements("""
            <AssumeRoleWithWebIdentityResponse><AssumeRoleWithWebIdentityResult><AssumedRoleUser><Arn>arn:aws:sts::1:assumed-role/r/s</Arn></AssumedRoleUser>
            <Credentials><SessionToken>FwoG&amp;x</SessionToken><SecretAccessKey>wJal</SecretAccessKey><Expiration>2026-12-01T22:00:00.5Z</Expiration><AccessKeyId>ASIA1</AccessKeyId></Credentials>
            </AssumeRoleWithWebIdentityResult></AssumeRoleWithWebIdentityResponse>
            """)
        #expect(ok["SessionToken"] == "FwoG&x" && ok["AccessKeyId"] == "ASIA1" && ok["Arn"] == "arn:aws:sts::1:assumed-role/r/s")
        #expect(ok["Credentials"] == nil, "an element with children has no text")
        #expect(ok["Expiration"].flatMap(RFC3339.date) == Date(timeIntervalSince1970: 1_796_162_400))

        let denied = XMLElements("<ErrorResponse><Error><Code>AccessDenied</Code><Message>Not authorized &lt;here&gt;</Message></Error></ErrorResponse>")
        guard case .providerError(let endpoint, let code, let detail) = AWSSecurityTokenService.failure(status: 403, denied, role: "arn:aws:iam::1:role/r") else {
            Issue.record("not a provider error"); return
        }
        #expect(endpoint == "AWS STS" && code == "AccessDenied")
        #expect(detail?.contains("arn:aws:iam::1:role/r") == true && detail?.contains("Not authorized <here>") == true && detail?.contains("trust policy") == true)
        if case .providerError(_, let code, _) = AWSSecurityTokenService.failure(status: 502, XMLElements("<html>bad gateway</html>"), role: "r") {
            #expect(code == "http_502")
        }
    }

    @Test func aRequestSTSWouldRefuseIsRefusedFirst() {
        #expect(AWSRoleRequest(roleARN: "arn:aws:iam::123456789012:role/path/deployer").problem == nil)
        #expect(AWSRoleRequest(roleARN: "arn:aws-cn:iam::123456789012:role/x").problem == nil)
        #expect(AWSRoleRequest(roleARN: "arn:aws:iam::12345:role/x").problem?.contains("not a role ARN") == true)
        #expect(AWSRoleRequest(roleARN: "arn:aws:iam::123456789012:user/x").problem?.contains("not a role ARN") == true)
        #expect(AWSRoleRequest(roleARN: "arn:aws:iam::123456789012:role/x", sessionName: "a b").problem?.contains("session name") == true)
        #expect(AWSRoleRequest(roleARN: "arn:aws:iam::123456789012:role/x", duration: .seconds(600)).problem?.contains("15 minutes") == true)
        #expect(AWSRoleRequest.sessionName(from: "Alice Smith <alice@example.org>") == "Alice-Smith--alice@example.org-")
        #expect(AWSRoleRequest.sessionName(from: "x") == "signin-x")
        #expect(AWSRoleRequest(roleARN: "r", duration: .seconds(3600)).effectiveMinimumValidity == .seconds(900))
        #expect(AWSRoleRequest(roleARN: "r", duration: .seconds(900)).effectiveMinimumValidity == .seconds(225))
        #expect(AWSRoleOptions.seconds("1h") == 3600 && AWSRoleOptions.seconds("90m") == 5400 && AWSRoleOptions.seconds("900") == 900)
        #expect(AWSRoleOptions.seconds("h") == nil && AWSRoleOptions.seconds("-5") == nil && AWSRoleOptions.seconds("1d") == nil)
    }

    /// A forwarded session's AWS rule reads the STS from the agent's hello through the family's port
    /// (`ForwardedTokens`): an agent whose hello names none is refused, naming the agent, before any STS is asked.
    @Test func aForwardedAgentThatNamesNoSTSIsRefusedNamingTheAgent() {
        struct Agent: ForwardedTokens {
            let socketPath = "/run/user/1000/signin-agent/test.sock"
            func token(_ request: TokenRequest, profile: String?) throws(SignInError) -> IssuedToken {
                IssuedToken(token: SignInToken(value: "id-token", expirationDate: Date().addingTimeInterval(3600)), kind: request.kind, subject: "s", name: "person@example.com")
            }
            func familySetting(_ key: String) throws(SignInError) -> String? { nil }
        }
        do {
            _ = try Agent().awsCredentials(AWSRoleRequest(roleARN: "arn:aws:iam::123456789012:role/dev"), account: nil)
            Issue.record("credentials without an STS")
        } catch {
            guard case .unsupported(let reason) = error else { Issue.record("\(error)"); return }
            #expect(reason.contains("/run/user/1000/signin-agent/test.sock") && reason.contains("STS"))
        }
    }
}
