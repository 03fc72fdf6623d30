import FoundationEssentials
import SignInKit

#if canImport(Glibc)
import Glibc
#endif

/// `signin docker-credential get|store|erase|list|configure`: docker's credential-helper protocol (also as
/// `docker-credential-signin`, the name docker and skopeo look for).
///
/// - `get`: the registry on standard input. One that `docker_registries` allows gets
///   `{"ServerURL", "Username": "oauth2accesstoken", "Secret": <fresh access token>}` (the impersonated service
///   account's with impersonation); any other gets docker's "credentials not found" and exit 1, so docker goes
///   on without credentials. Not signed in: exit 3, no browser.
/// - `store`, `erase`: nothing is kept (the grant stays in signin's store); exit 0.
/// - `list`: the allowed registries that are plain names (no `*`), each with the user name.
/// - `configure REGISTRY...`: adds `"credHelpers": {REGISTRY: "signin"}` to `$DOCKER_CONFIG/config.json`
///   (default `~/.docker/config.json`), keeping everything else in it, written atomically.
struct DockerCredential: SignInCommand {
    static let username = "oauth2accesstoken"
    static let notFound = "credentials not found in native keychain"
    static let spec = CommandSpec(
        of: Self.self, options: Impersonation.options, summary: "docker credential helper: a fresh token for Artifact Registry and gcr.io",
        details: """
            Speaks docker's credential-helper protocol (installed as docker-credential-signin too). `get` answers the
            registries in docker_registries (Google's *-docker.pkg.dev, gcr.io and *.gcr.io by default for Google)
            with user oauth2accesstoken and a fresh access token, and "credentials not found" for any other; `store`
            and `erase` keep nothing. `configure REGISTRY...` adds credHelpers entries for signin to docker's
            config.json (as `gcloud auth configure-docker` does); docker, skopeo and podman then ask signin.
            """,
        usageTail: " get|store|erase|list|configure [REGISTRY...]",
        positionalWords: ["get", "store", "erase", "list", "configure"], takesAccount: true, takesJSON: false, takesArguments: true,
        programNames: ["docker-credential-signin"])

    let operation: String
    let registries: [String]
    let chain: [String]?

    init(_ a: Arguments, _ env: [String: String]) throws(UsageError) {
        chain = Impersonation(a).chain
        guard let op = a.positional.first, ["get", "store", "erase", "list", "configure"].contains(op) else {
            throw UsageError("`signin docker-credential` takes one of get, store, erase, list (docker calls it so) or configure REGISTRY...")
        }
        operation = op
        registries = Array(a.positional.dropFirst())
        if op == "configure" {
            if registries.isEmpty { throw UsageError("`signin docker-credential configure` needs the registries, such as europe-docker.pkg.dev or gcr.io") }
            if let bad = registries.first(where: { DockerRegistries.normalized($0) == nil }) { throw UsageError("\"\(bad.withoutControlCharacters)\" is not a registry host name") }
        } else if !registries.isEmpty {
            throw UsageError("`signin docker-credential \(op)` takes its input on standard input, not as arguments")
        }
    }

    func run(_ r: CommandRun) throws -> ExitCode {
        if let agent = r.agent, let answered = try run(through: agent) { return answered }
        if let answered = try acknowledgeStoreOrErase(r.environment, r.io) { return answered }
        return try run(in: r.context())
    }

    /// `store` and `erase` need no configuration: docker calls them after `docker login` and `docker logout`.
    func acknowledgeStoreOrErase(_ env: [String: String], _ io: IOStreams) throws(UsageError) -> ExitCode? {
        guard operation == "store" || operation == "erase" else { return nil }
        while readLine() != nil {}
        return .success
    }

    func run(through agent: AgentTokens) throws(SignInError) -> ExitCode? {
        let io = agent.io
        if operation == "store" || operation == "erase" { return nil }  // nothing to keep, here as anywhere
        guard operation == "get" || operation == "list" else {
            throw .unsupported(reason: "`docker-credential configure` edits this machine's docker configuration from the configuration on the laptop; give the registries to it there")
        }
        return try serve(agent.impersonating(chain), io)
    }

    func run(in c: Context) throws(SignInError) -> ExitCode {
        let io = c.io
        if operation == "configure" { return try configure(c, patterns: DockerRegistries.patterns(for: c.client.configuration)) }
        return try serve(LocalTokens(c: c, chain: chain, interactive: false), io)
    }

    private func serve(_ source: some BridgeSource, _ io: IOStreams) throws(SignInError) -> ExitCode {
        var input = ""
        if operation == "get" { while let line = readLine() { input += line } }
        return try answer(input, source).write(io)
    }

    /// The protocol, apart from standard input and output (so it has unit tests with a stand-in source): what docker
    /// sent (`get`: the registry) and what to answer.
    func answer(_ input: String, _ source: some BridgeSource) throws(SignInError) -> BridgeAnswer {
        let patterns = source.dockerRegistries()
        switch operation {
        case "get":
            guard let registry = DockerRegistries.normalized(input), DockerRegistries.allows(registry, patterns: patterns) else {
                return BridgeAnswer(code: .failure, output: Self.notFound + "\n")
            }
            let secret = try source.token(.access, Freshness(minTTL: 60)).presented(to: .bearerOnly("docker (a registry password)")).value
            return BridgeAnswer(output: JSONText.object(["ServerURL": .string(input.trimmingWhitespace), "Username": .string(Self.username), "Secret": .string(secret)]) + "\n")
        case "list":
            var entries: [String: JSONValueOut] = [:]
            for p in patterns where !p.contains("*") { entries[p] = .string(Self.username) }
            return BridgeAnswer(output: JSONText.object(entries) + "\n")
        default:
            return BridgeAnswer()
        }
    }

    private func configure(_ c: Context, patterns: [String]) throws(SignInError) -> ExitCode {
        let io = c.io
        let wanted = registries.compactMap(DockerRegistries.normalized)
        if let refused = wanted.first(where: { !DockerRegistries.allows($0, patterns: patterns) }) {
            throw .configInvalid(file: c.client.configuration.sourcePath, field: "docker_registries",
                                 reason: "\(refused) is not in it (" + (patterns.isEmpty ? "none is allowed" : "allowed: " + patterns.joined(separator: ", ")) + "); add \"\(refused)\" there first, so that signin will answer it")
        }
        let folder = c.environment["DOCKER_CONFIG"].flatMap { $0.isEmpty ? nil : $0 } ?? (ProcessEnvironment.home(c.environment) + "/.docker")
        let path = folder + "/config.json"
        var document: [String: JSONValue] = [:]
        if let text = try TextFiles.read(path), !text.trimmingWhitespace.isEmpty {
            guard let o = JSONValue.object(from: Data(text.utf8)) else {
                throw .storeUnreadable(path: path, reason: "not a JSON object; nothing was changed (fix or move it, then run this again)")
            }
            document = o
        }
        var helpers: [String: JSONValue] = [:]
        if let existing = document["credHelpers"] {
            guard case .object(let o) = existing else { throw .storeUnreadable(path: path, reason: "\"credHelpers\" is not an object; nothing was changed") }
            helpers = o
        }
        for r in wanted { helpers[r] = .string("signin") }
        document["credHelpers"] = .object(helpers)
        try TextFiles.write(JSONText.render(JSONText.value(.object(document))) + "\n", to: path)
        io.err("signin: \(path) now sends \(wanted.joined(separator: ", ")) to docker-credential-signin.")
        return .success
    }
}
