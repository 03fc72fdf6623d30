import CSignInSystem
#if canImport(Glibc)
import Glibc
#endif

/// The two halves of the release build. `scripts/build-release` makes `signin` a static executable (no dynamic
/// loader, no shared library to map and relocate: the start of a cached `signin token` is that of a C program)
/// and `signin-dynamic` beside it, the same program linked the usual way. libcurl and libsecret can only be
/// loaded into the dynamic one, so the static one hands the command over (`execv`, the same arguments and
/// environment, the signal state it was given) before it would load either, prompt for a passphrase, or look up
/// the user database, and at once for commands that are not on the cached path. Nothing has been written or
/// printed by then, so the command runs once, in the dynamic half. A build that is not static (the debug build,
/// the tests' own) never hands over.
package enum DynamicSibling {
    /// Whether this is the static half.
    public static var isStatic: Bool {
        #if SIGNIN_STATIC_EXECUTABLE
        return true
        #else
        return false
        #endif
    }

    /// The file name of the dynamic half.
    public static let fileName = "signin-dynamic"

    /// Why a run needs the dynamic half: the one list of what the static half cannot do.
    public enum Need: Sendable, Equatable {
        /// libcurl, for the network.
        case network
        /// libsecret, for a key in the Secret Service.
        case secretService
        /// The TSS libraries, for a key in the TPM.
        case tpm
        /// A store passphrase to read (the dynamic half reads it, once, for whatever else it needs).
        case passphrase
        /// The user database (NSS), for a home folder with no `$HOME`.
        case userDatabase
        /// A command that is not on the cached path (the reason it gives).
        case command(String)

        /// As the static half says it when the dynamic half is missing.
        public var description: String {
            switch self {
            case .network: return "libcurl for the network"
            case .secretService: return "libsecret for the Secret Service"
            case .tpm: return "the TSS libraries for the TPM"
            case .passphrase: return "the store's passphrase"
            case .userDatabase: return "no HOME: the user database"
            case .command(let why): return why
            }
        }

        /// The codes the C loaders pass (`SIGNIN_NEEDS_*` in csystem.h).
        init(code: Int32) {
            switch code {
            case 1: self = .network
            case 2: self = .secretService
            case 3: self = .tpm
            default: self = .command("a shared library")
            }
        }
    }

    /// Every hand-over goes through here: in the static half, replaces this process with the dynamic half for `need`
    /// (nothing has been written or printed by then); elsewhere, nothing.
    public static func require(_ need: Need) {
        HandOverCheck.reachedHandOver(need.description)
        guard isStatic else { return }
        replaceProcess(because: need.description)
    }

    /// Replaces this process with the dynamic half, running the same command line (argv[0] kept: it chooses the
    /// command, as `docker-credential-signin` does). Where it cannot be found or run, says so and exits 1.
    private static func replaceProcess(because why: String) -> Never {
        let me = ProcessEnvironment.executablePath ?? ""
        let dir = PathName(path: me).deletingLastPathComponent
        let candidates = [dir + "/" + fileName, dir + "/../libexec/signin/" + fileName]
        guard let target = candidates.first(where: { access($0, X_OK) == 0 }) else {
            FileIO.writeStandardError("signin: this command needs \(fileName) (\(why)), the half of signin that loads shared libraries, and it is not at \(candidates.joined(separator: " or ")); reinstall signin.\n")
            exit(1)
        }
        let failure = ProcessHardening.replaceImage(path: target, arguments: CommandLine.arguments, searchPath: false)
        let e = FileIO.errnoText(failure)
        FileIO.writeStandardError("signin: cannot run \(target) (\(why)): \(e)\n")
        exit(1)
    }

    /// The path a user runs signin by: the static half's when this is the dynamic half of a release build (the
    /// agent, `aws configure` and `google external-account` write or start this one), else this program's own.
    public static var frontPath: String? {
        guard let me = ProcessEnvironment.executablePath else { return nil }
        let name = PathName(path: me).lastComponent
        guard name == fileName else { return me }
        let dir = PathName(path: me).deletingLastPathComponent
        for front in [dir + "/signin", dir + "/../../bin/signin"] where access(front, X_OK) == 0 {
            return realpathOf(front) ?? front
        }
        return me
    }

    private static func realpathOf(_ path: String) -> String? {
        guard let r = realpath(path, nil) else { return nil }
        defer { free(r) }
        return String(cString: r)
    }
}

#if SIGNIN_STATIC_EXECUTABLE
/// Called by the C loaders (libcurl, libsecret) in the static half, before `dlopen`.
@_cdecl("signin_needs_dynamic")
func signinNeedsDynamic(_ code: Int32) {
    DynamicSibling.require(DynamicSibling.Need(code: code))
}
#endif
