/// Where the `signin` executable's two halves may hand a run over: the points the library reaches that the release
/// build's static half cannot serve (the network, the Secret Service, the TPM, a passphrase, the user database). The
/// library only announces them; the `signin` executable installs what happens there (`install`: hand the run to
/// `signin-dynamic`, and in debug builds check that nothing was written before). A program on SignInKit installs
/// nothing, so for it every point is nothing at all, and nothing is ever written to its standard error.
package enum HandOverPoint {
    /// Why a run needs the dynamic half: the one list of what the static half cannot do.
    package enum Need: Sendable, Equatable, CustomStringConvertible {
        /// libcurl, for the network.
        case network
        /// libsecret, for the Secret Service.
        case secretService
        /// The TSS libraries, for the TPM.
        case tpm
        /// A passphrase prompt (the terminal, the kernel keyring's fallback).
        case passphrase
        /// No HOME: the user database (NSS modules are shared libraries).
        case userDatabase
        /// A command that is not on the cached path, for the reason given.
        case command(String)

        /// As the static half says it when the dynamic half is missing.
        package var description: String {
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
        package init(code: Int32) {
            switch code {
            case 1: self = .network
            case 2: self = .secretService
            case 3: self = .tpm
            default: self = .command("a shared library")
            }
        }
    }

    /// What the `signin` executable does at a point (`require`) and at each write before the first one (`wrote`, debug
    /// builds only).
    package struct Hooks: Sendable {
        package let require: @Sendable (Need) -> Void
        package let wrote: @Sendable (String) -> Void
        package init(require: @escaping @Sendable (Need) -> Void, wrote: @escaping @Sendable (String) -> Void) {
            self.require = require
            self.wrote = wrote
        }
    }

    // Set once by the executable's first line, before any thread starts, and only read after: no lock is needed.
    nonisolated(unsafe) private static var hooks: Hooks?

    /// Installs the executable's hooks (its first line, before anything runs).
    package static func install(_ h: Hooks) { hooks = h }

    /// A point where the run may need the dynamic half for `need`.
    package static func require(_ need: Need) { hooks?.require(need) }

    /// Notes a write (`what` says which); debug builds only.
    @inline(__always) package static func wrote(_ what: @autoclosure () -> String) {
        #if DEBUG
        if let hooks { hooks.wrote(what()) }
        #endif
    }
}

#if SIGNIN_STATIC_EXECUTABLE
/// Called by the C loaders (libcurl, libsecret, the TSS libraries) in the static half, before `dlopen`.
@_cdecl("signin_needs_dynamic")
func signinNeedsDynamic(_ code: Int32) {
    HandOverPoint.require(HandOverPoint.Need(code: code))
}
#endif
