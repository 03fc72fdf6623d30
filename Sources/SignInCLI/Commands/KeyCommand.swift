import SignInKit

#if canImport(Glibc)
import Glibc
#endif

/// `signin key move --to STORAGE`: a new store key, kept where STORAGE says.
struct KeyCommand: SignInCommand {
    static let toOption = OptionSpec("--to", value: "STORAGE", choices: ["secret-service", "passphrase", "file", "tpm", "tpm+passphrase"], "Where the key goes: secret-service, passphrase, file, tpm or tpm+passphrase")
    static let spec = CommandSpec(
        of: Self.self, options: [KeyCommand.toOption], summary: "Where the store's key is: `signin key move --to secret-service|passphrase|file|tpm|tpm+passphrase`",
        details: """
            `signin key move --to STORAGE` makes a new store key and keeps it in the Secret Service (GNOME Keyring,
            KWallet, KeePassXC), under a passphrase (scrypt, asked twice, at least 8 characters), in a file beside
            the entries, or sealed to this machine's TPM 2.0 (`tpm`; `tpm+passphrase` adds a passphrase the TPM
            checks; the TPM is /dev/tpmrm0, or the one TSS2_TCTI names), where a copy of the folder opens nothing; every entry is encrypted again under it, so the old key opens nothing written after. A move
            is journaled: interrupted anywhere, the next command finishes it or rolls it back. `status` says where
            the key is now.
            """,
        usageOverride: "signin key move --to secret-service|passphrase|file|tpm|tpm+passphrase [--passphrase-fd N]", positionalWords: ["move"], takesArguments: true)

    let target: KeyStorage

    init(_ a: Arguments, _ env: [String: String]) throws(UsageError) {
        let to = a.value(Self.toOption).flatMap(KeyStorage.init(rawValue:))
        guard a.positional == ["move"], let to, to != .auto else {
            throw UsageError("usage: signin key move --to secret-service|passphrase|file|tpm|tpm+passphrase")
        }
        target = to
    }

    func run(_ r: CommandRun) throws -> ExitCode {
        return try run(in: r.context())
    }

    /// `signin key move --to STORAGE`: a new store key, kept where STORAGE says; every entry is encrypted again
    /// under it (crash-safe: see `CredentialStore.moveKey`), so a copy of the old key opens nothing written after.
    func run(in c: Context) throws(SignInError) -> ExitCode {
        let io = c.io
                // Every configuration shares the store: name them all, so older entries of each are carried over first.
        var configurations = [(issuer: c.client.configuration.issuer, clientID: c.client.configuration.clientID)]
        for name in SignInConfiguration.profileNames(environment: c.environment) {
            if let config = try? SignInConfiguration.load(path: SignInConfiguration.directory(environment: c.environment) + "/\(name).json") {
                configurations.append((config.issuer, config.clientID))
            }
        }
        let result = try c.client.fileStore.moveKey(to: target, configurations: configurations)
        if c.json {
            io.out(JSONText.object(["from": .string(result.from), "to": .string(result.to), "moved": .bool(result.moved), "reencrypted": .int(result.reencrypted)]))
        } else if !result.moved {
            io.out("The key is already there: \(result.to)")
        } else {
            io.out("Moved the store to a new key.\n  from: \(result.from)\n  to:   \(result.to)\n\(result.reencrypted) entr\(result.reencrypted == 1 ? "y" : "ies") encrypted again under it; the old key, and any copy of it, opens nothing written from now on.")
        }
        return .success
    }
}
