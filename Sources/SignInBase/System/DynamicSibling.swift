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
/// the tests' own) never hands over. The library announces the points (`HandOverPoint`); the `signin` executable hands
/// over there (SignInCLI's `HandOver`), and says why when it cannot.
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

    /// Replaces this process with the dynamic half, running the same command line (argv[0] kept: it chooses the
    /// command, as `docker-credential-signin` does). Returns only when it cannot: why, for the executable to say.
    package static func replaceProcess(because why: String) -> String {
        let me = ProcessEnvironment.executablePath ?? ""
        let dir = PathName(path: me).deletingLastPathComponent
        let candidates = [dir + "/" + fileName, dir + "/../libexec/signin/" + fileName]
        guard let target = candidates.first(where: { access($0, X_OK) == 0 }) else {
            return "this command needs \(fileName) (\(why)), the half of signin that loads shared libraries, and it is not at \(candidates.joined(separator: " or ")); reinstall signin"
        }
        let failure = ProcessHardening.replaceImage(path: target, arguments: CommandLine.arguments, searchPath: false)
        return "cannot run \(target) (\(why)): \(FileIO.errnoText(failure))"
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
