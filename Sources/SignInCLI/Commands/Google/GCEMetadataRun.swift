import FoundationEssentials
import SignInKit

#if canImport(Glibc)
import Glibc
#endif

/// `signin exec --gce-metadata -- COMMAND`: COMMAND runs beside a metadata server of signin's.
///
/// 1. Signed in (or, with `--login`, signed in now), and with impersonation the service account's first token
///    minted: otherwise the error, before COMMAND starts (so a script sees exit 3, not a tool's confusion).
/// 2. What would make the tools look elsewhere first is said once on standard error: `GOOGLE_APPLICATION_CREDENTIALS`,
///    gcloud's ADC file, an account in gcloud's own configuration; for gcloud, a configuration without a project.
/// 3. The server starts on a free port; COMMAND runs with `GCE_METADATA_HOST`, `GCE_METADATA_IP` and
///    `GCE_METADATA_ROOT` naming it, and no token in its environment or arguments.
/// 4. Signals other processes send signin go on to COMMAND (the terminal's reach it directly); when it ends the
///    server stops (after answering the request in hand) and signin exits with COMMAND's status or signal.
struct GCEMetadataRun {
    let c: Context
    /// The command line's chain (nil: as the configuration says).
    let chain: [String]?
    let login: Bool
    let verbose: Bool
    let passphraseFD: Int32?

    init(_ c: Context, chain: [String]?, login: Bool, verbose: Bool, passphraseFD: Int32?) {
        self.c = c
        self.chain = chain
        self.login = login
        self.verbose = verbose
        self.passphraseFD = passphraseFD
    }

    func run(_ command: [String]) throws(SignInError) -> ExitCode {
        let io = c.io
        _ = try LocalTokens(c: c, chain: chain, interactive: login).token(.access, Freshness(minTTL: 300))
        guard let path = ExecCommand.locate(command, environment: c.environment, io) else { return ExecCommand.notFound }
        for line in Self.precedenceNotes(c.environment, c.client.configuration, command: command[0]) { io.err("signin: note: " + line) }
        let gceCache = Self.gcloudGCECache(c.environment)
        if Self.expireNotOnGCE(gceCache) {
            io.err("signin: note: gcloud had cached \"not on Google Compute Engine\" in \(gceCache.withoutControlCharacters) (from a run without a metadata server, or without a project); signin marked that answer expired, so gcloud asks this metadata server again.")
        }
        let log = MetadataLog(verbose: verbose, configurationPath: c.client.configuration.sourcePath, loginCommand: c.command("login"))
        let server = try MetadataServer(client: c.client, account: c.account, impersonate: chain, onEvent: { log.show($0, io) })
        server.start()
        var environment = c.environment
        environment.merge(server.environment) { $1 }
        return try ServerLife.running(command, at: path, environment: environment, closing: passphraseFD.map { [$0] } ?? [], ended: {
            server.stop()
            // A "no" gcloud cached during this run (no project named yet) must not outlive it: the next run, with a
            // project, would not even ask.
            _ = Self.expireNotOnGCE(gceCache)
        }, cannotStart: { e in ExecCommand.cannotRun(command, e, io) })
    }

    /// What, in the documented order of gcloud and google-auth, comes before a metadata server.
    static func precedenceNotes(_ env: [String: String], _ configuration: SignInConfiguration, command: String) -> [String] {
        var notes: [String] = []
        if let file = env["GOOGLE_APPLICATION_CREDENTIALS"], !file.isEmpty {
            notes.append("GOOGLE_APPLICATION_CREDENTIALS is set (\(file.withoutControlCharacters)): Google's client libraries use that file, not signin; unset it for this command.")
        }
        let gcloudConfig = env["CLOUDSDK_CONFIG"].flatMap { $0.isEmpty ? nil : $0 } ?? (ProcessEnvironment.home(env) + "/.config/gcloud")
        let adc = gcloudConfig + "/application_default_credentials.json"
        if Posix.access(adc, F_OK) == 0 {
            notes.append("\(adc.withoutControlCharacters) exists: Google's client libraries use it, not signin; `gcloud auth application-default revoke` removes it (and the refresh token it holds in clear).")
        }
        if let account = gcloudAccount(env, gcloudConfig) {
            notes.append("gcloud has its own account set (\(account.withoutControlCharacters)) and uses it, not signin's: `gcloud config unset account`, or give gcloud a fresh CLOUDSDK_CONFIG.")
        }
        let name = command.split(separator: "/").last.map(String.init) ?? command
        if ["gcloud", "gsutil", "bq"].contains(name) && configuration.projectID == nil && configuration.projectNumber == nil {
            notes.append("gcloud takes the metadata server for real only when it names a project: add \"project_id\" to \(configuration.sourcePath).")
        }
        return notes
    }

    /// Where gcloud caches whether it runs on Google Compute Engine (for 10 minutes from the file's time).
    static func gcloudGCECache(_ env: [String: String]) -> String {
        (env["CLOUDSDK_CONFIG"].flatMap { $0.isEmpty ? nil : $0 } ?? (ProcessEnvironment.home(env) + "/.config/gcloud")) + "/gce"
    }

    /// When gcloud's cache says "False" and is still in force, its time is set back so that gcloud asks the metadata
    /// server again (its content, and anything else of gcloud's, stays as it is). True when it did.
    static func expireNotOnGCE(_ path: String) -> Bool {
        guard let text = (try? TextFiles.read(path)) ?? nil, text.trimmingWhitespace == "False" else { return false }
        guard case .success(let st) = Posix.status(ofLink: path), st.kind == .file, st.modified.seconds > Posix.now() - 600 else { return false }
        var times = [timespec(tv_sec: 0, tv_nsec: 0), timespec(tv_sec: 0, tv_nsec: 0)]
        return Posix.utimensat(AT_FDCWD, path, &times, AT_SYMLINK_NOFOLLOW) == 0
    }

    /// The account of gcloud's active configuration (`CLOUDSDK_CORE_ACCOUNT`, else `[core] account` in it).
    static func gcloudAccount(_ env: [String: String], _ folder: String) -> String? {
        if let a = env["CLOUDSDK_CORE_ACCOUNT"], !a.isEmpty { return a }
        let active = ((try? TextFiles.read(folder + "/active_config")) ?? nil)?.trimmingWhitespace ?? "default"
        // A configuration name, as signin's own are (a path's last part, never `..` or a path).
        guard SignInConfiguration.isValidProfileName(active), let text = (try? TextFiles.read(folder + "/configurations/config_" + active)) ?? nil else { return nil }
        var inCore = false
        for raw in text.split(separator: "\n") {
            let line = raw.trimmingWhitespace
            if line.hasPrefix("[") { inCore = line == "[core]"; continue }
            guard inCore, let eq = line.firstIndex(of: "=") else { continue }
            if line[..<eq].trimmingWhitespace == "account" {
                let value = line[line.index(after: eq)...].trimmingWhitespace
                return value.isEmpty ? nil : value
            }
        }
        return nil
    }
}
