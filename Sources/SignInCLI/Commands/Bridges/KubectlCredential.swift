import FoundationEssentials
import SignInKit

#if canImport(Glibc)
import Glibc
#endif

/// `signin kubectl-credential`: a kubectl exec credential plugin.
struct KubectlCredential: SignInCommand {
    static let spec = CommandSpec(
        of: Self.self, options: MinimumValidity.options + TokenTarget.options + [KubectlCredential.tokenOption], summary: "kubectl exec credential plugin: an ExecCredential with the ID token",
        details: """
            An ExecCredential (client.authentication.k8s.io v1, or v1beta1 as $KUBERNETES_EXEC_INFO asks) with a fresh
            ID token (or, with --token access, the access token, for clusters whose authenticator takes one) and its
            expiry, for kubeconfig's users[].user.exec. Signs in interactively only when kubectl says the session is
            interactive.
            """,
        takesAccount: true, takesJSON: false)

    static let tokenOption = OptionSpec("--token", value: "id|access", "Which token the cluster takes: the ID token (default) or the access token")

    let minTTL: Int
    let interactive: Bool
    let kind: TokenKind
    /// `--resource`, `--audience` (with `--token access`): the access token for the cluster's API alone.
    let target: TokenTarget

    init(_ a: Arguments, _ env: [String: String]) throws(UsageError) {
        minTTL = try MinimumValidity(a).seconds
        target = TokenTarget(a)
        switch a.value(Self.tokenOption) ?? "id" {
        case "id": kind = .id
        case "access": kind = .access
        case let other: throw UsageError("--token \"\(other.withoutControlCharacters)\" is not id or access")
        }
        if target.isSet && kind != .access { throw UsageError("--resource and --audience ask for an access token: add --token access") }
        interactive = KubectlExecInfo.interactive(env)
    }

    func run(_ r: CommandRun) throws -> ExitCode {
        if interactive { r.handOver("an interactive sign-in is not on the cached path") }
        if let agent = r.agent, let answered = try run(through: agent) { return answered }
        return try run(in: r.context(signsIn: interactive))
    }

    /// A kubectl exec credential plugin (client.authentication.k8s.io): prints an ExecCredential with a fresh ID
    /// token (what Kubernetes' OIDC authenticator takes) and its expiry, in the API version kubectl asks for in
    /// `$KUBERNETES_EXEC_INFO` (v1, or v1beta1 for older kubectl). Signs in through the browser only when kubectl
    /// says the session is interactive; otherwise exits 3 with the reason on standard error.
    func run(in c: Context) throws(SignInError) -> ExitCode {
        try serve(LocalTokens(c: c, chain: [], interactive: KubectlExecInfo.interactive(c.environment)), environment: c.environment)
    }

    func run(through agent: AgentTokens) throws(SignInError) -> ExitCode? { try serve(agent, environment: ProcessEnvironment.current) }

    private func serve(_ source: some TokenSource, environment: [String: String]) throws(SignInError) -> ExitCode {
        try answer(source, environment: environment).write(source.io)
    }

    /// The ExecCredential for `source`'s token, in the API version `environment`'s `KUBERNETES_EXEC_INFO` asks.
    func answer(_ source: some TokenSource, environment: [String: String]) throws(SignInError) -> BridgeAnswer {
        let version = KubectlExecInfo.apiVersion(environment)
        let issued = try source.token(kind, Freshness(minTTL: minTTL), for: target)
        let token = issued.token
        // ExecCredential has no token type: kubectl sends `Authorization: Bearer`.
        var status: [String: JSONValueOut] = ["token": .string(try issued.presented(to: .bearerOnly("kubectl (an ExecCredential)")).value)]
        if let exp = token.expirationDate { status["expirationTimestamp"] = .string(iso8601(exp)) }
        return BridgeAnswer(output: JSONText.object(["apiVersion": .string(version), "kind": .string("ExecCredential"), "status": .object(status)]) + "\n")
    }
}

/// What kubectl tells its exec plugins in `$KUBERNETES_EXEC_INFO`.
enum KubectlExecInfo {
    struct ExecInfo {
        struct Spec { let interactive: Bool? }
        let apiVersion: String?
        let spec: Spec?
    }

    static func decoded(_ env: [String: String]) -> ExecInfo? {
        guard let text = env["KUBERNETES_EXEC_INFO"], let o = JSONValue.object(from: Data(text.utf8)) else { return nil }
        var spec: ExecInfo.Spec?
        if case .object(let s)? = o["spec"] { spec = ExecInfo.Spec(interactive: s["interactive"].flatMap { if case .bool(let b) = $0 { b } else { nil } }) }
        return ExecInfo(apiVersion: o["apiVersion"]?.string, spec: spec)
    }

    /// The version kubectl asked for; v1 when it did not say (kubectl 1.22+ always says).
    static func apiVersion(_ env: [String: String]) -> String {
        let asked = decoded(env)?.apiVersion ?? ""
        return ["client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1"].contains(asked) ? asked : "client.authentication.k8s.io/v1"
    }

    /// kubectl says whether a person is there (`spec.interactive`); without that, never.
    static func interactive(_ env: [String: String]) -> Bool { decoded(env)?.spec?.interactive == true }
}
