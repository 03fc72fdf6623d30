import SignInBase
import SignInProtocol
import CSignInSystem
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Where a store's key is kept (`key_storage` in the configuration). Decided once, when the key is created;
/// an existing store keeps its key where it is until `StoreKey.move(to:)`.
public enum KeyStorage: String, Sendable, CaseIterable, Codable {
    /// The TPM when one is reachable (`/dev/tpmrm0`, `TSS2_TCTI` or `TPM2TOOLS_TCTI`), else the Secret Service
    /// when a session bus offers it, else a file.
    case auto
    /// The freedesktop Secret Service (GNOME Keyring, KWallet, KeePassXC), as an item labelled "signin store key".
    case secretService = "secret-service"
    /// Wrapped under a key derived from a passphrase with scrypt.
    case passphrase
    /// A file beside the entries (mode 0600): what a copy of the folder carries along.
    case file
    /// Sealed to this machine's TPM 2.0: unsealed without a prompt here, useless on any other machine.
    case tpm
    /// Sealed to this machine's TPM under a passphrase the TPM itself checks (with its dictionary-attack lockout).
    case tpmPassphrase = "tpm+passphrase"

    /// Whether the key is sealed to the TPM.
    package var isTPM: Bool { self == .tpm || self == .tpmPassphrase }
    /// Whether opening the key asks for a passphrase.
    package var asksPassphrase: Bool { self == .passphrase || self == .tpmPassphrase }
    /// Whether a key of this storage is kept elsewhere than the folder and described in `key.json`.
    var isDescribed: Bool { self != .file && self != .auto }
}

/// Why a passphrase is asked for.
public enum PassphrasePurpose: Sendable, Equatable {
    /// A new passphrase for a new key (ask twice).
    case create
    /// The passphrase that unlocks the key; `attempt` counts from 1.
    case unlock(attempt: Int)
}

/// Asks the person (or a script's file descriptor) for the passphrase; nil when there is no way to ask.
public typealias PassphraseProvider = @Sendable (PassphrasePurpose) -> String?

/// How a store's key is kept and found: the settings a `CredentialStore` needs for it.
public struct KeyCustody: Sendable {
    /// Where a new key goes.
    public var storage: KeyStorage
    /// How long an unwrapped key stays in the kernel keyring; zero keeps it out of the kernel.
    public var cacheDuration: Duration {
        get { .seconds(cacheSeconds) }
        set { cacheSeconds = max(0, newValue.wholeSecondsRoundedUp) }
    }
    package var cacheSeconds: Int
    /// Asks for the passphrase of a `passphrase` store.
    public var passphrase: PassphraseProvider?
    /// Whether a session bus may offer the Secret Service (`$DBUS_SESSION_BUS_ADDRESS` is set).
    public var sessionBusAvailable: Bool
    /// The configuration file these settings come from, named when the store's key is not where it asks.
    public var configurationPath: String?
    /// The TPM as the TSS names it (`device:/dev/tpmrm0`, `swtpm:host=127.0.0.1,port=2321`): from `TSS2_TCTI`, else
    /// `TPM2TOOLS_TCTI`, else `/dev/tpmrm0` when present; nil when this machine shows none.
    public var tpmDevice: String? {
        get { tpmDeviceOverride ?? TPM.device() }
        set { tpmDeviceOverride = .some(newValue) }
    }
    /// Set: what the program chose; nil: the environment decides when a TPM is first needed (never on a cached path).
    private var tpmDeviceOverride: String??
    /// Where the store's notices for a person go (where a new key was put and why, a kernel keyring that cannot be
    /// used): `SignInClient` turns them into `SignInEvent.notice`, which the `signin` command prints. The library
    /// itself never writes to the program's standard error. Nil: dropped.
    public var onNotice: (@Sendable (String) -> Void)?

    /// Says `text` to whoever listens (`onNotice`).
    package func notice(_ text: String) { onNotice?(text) }

    /// Whether this process's environment names a D-Bus session bus (`DBUS_SESSION_BUS_ADDRESS` set and not empty):
    /// the default of `sessionBusAvailable`.
    public static var sessionBusInEnvironment: Bool { Posix.isSet("DBUS_SESSION_BUS_ADDRESS") }

    /// Settings for a store: where new keys go, the cache lifetime (default eight hours), the passphrase source.
    public init(storage: KeyStorage = .auto, cacheDuration: Duration = .seconds(8 * 3600), passphrase: PassphraseProvider? = nil,
                sessionBusAvailable: Bool = KeyCustody.sessionBusInEnvironment) {
        self.storage = storage
        self.cacheSeconds = max(0, cacheDuration.wholeSecondsRoundedUp)
        self.passphrase = passphrase
        self.sessionBusAvailable = sessionBusAvailable
    }
}


/// The key storage's section of the configuration (`key_storage`, `key_cache_seconds`), read here beside
/// `KeyCustody`, which it becomes; `SignInConfiguration.keyStorage` and `keyCacheDuration` are views of it.
public struct KeyStorageSettings: ConfigurationSection {
    public static let keys = ["key_storage", "key_cache_seconds"]

    /// `key_storage`; default auto.
    public var storage: KeyStorage = .auto
    /// `key_cache_seconds`; default 8 hours.
    public var cacheSeconds = 8 * 3600

    public init() {}

    public init(from fields: ConfigurationFields) throws(SignInError) {
        if let k = try fields.string("key_storage") {
            guard let storage = KeyStorage(rawValue: k) else { throw fields.fail("key_storage", "must be one of \(KeyStorage.allCases.map(\.rawValue).joined(separator: ", "))") }
            self.storage = storage
        }
        if let v = fields["key_cache_seconds"] {
            guard case .number = v, let t = v.int, (0...(30 * 86400)).contains(t) else { throw fields.fail("key_cache_seconds", "must be a whole number of seconds from 0 (no cache) to 2592000") }
            cacheSeconds = t
        }
    }
}

extension SignInConfiguration {
    /// Where a new store key is kept (`key_storage`: auto, secret-service, passphrase, file, tpm, tpm+passphrase). Default auto.
    public var keyStorage: KeyStorage {
        get { sections[KeyStorageSettings.self].storage }
        set { sections[KeyStorageSettings.self].storage = newValue }
    }

    /// How long an unlocked key stays in the kernel keyring (`key_cache_seconds`; zero: not at all). Default 8 hours.
    public var keyCacheDuration: Duration {
        get { .seconds(sections[KeyStorageSettings.self].cacheSeconds) }
        set { sections[KeyStorageSettings.self].cacheSeconds = max(0, newValue.wholeSecondsRoundedUp) }
    }
}
