import SignInBase
import SignInProtocol
import CSignInSystem
import FoundationEssentials

/// The freedesktop Secret Service, through libsecret (loaded on first use). Items carry the store ID and the store
/// folder, so every key signin ever put there for a folder can be found and removed.
enum SecretService {
    package static func store(storeID: String, key: [UInt8], directory: String) throws(SignInError) {
        var error: UnsafeMutablePointer<CChar>?
        defer { signin_secret_free(error) }
        let label = "signin store key (\(directory))"
        guard signin_secret_store(storeID, directory, label, Data(key).base64EncodedString(), &error) == 0 else {
            throw .storeUnwritable(path: directory + "/key.json", reason: "the key cannot go to the Secret Service: " + explained(error.map { String(cString: $0) } ?? "unknown error")
                                   .replacing("could not store the key in the Secret Service: ", with: ""))
        }
    }

    package static func lookup(storeID: String, descriptorPath: String) throws(SignInError) -> [UInt8] {
        var secret: UnsafeMutablePointer<CChar>?
        var error: UnsafeMutablePointer<CChar>?
        defer { signin_secret_free(secret); signin_secret_free(error) }
        let rc = signin_secret_lookup(storeID, &secret, &error)
        if rc == 1 {
            throw .storeUnreadable(path: descriptorPath, reason: "the keyring that holds the key is locked: unlock it (in your keyring app, or by signing in to the desktop) and try again; the credentials are untouched")
        }
        guard rc == 0 else {
            let reason = error.map { String(cString: $0) } ?? "unknown error"
            let locked = reason.lowercased().contains("lock") || reason.lowercased().contains("prompt")
            throw .storeUnreadable(path: descriptorPath, reason: (locked ? "the keyring is locked: unlock it (in your keyring app, or by signing in to the desktop) and try again" : "the Secret Service is not available: \(explained(reason))") + "; the credentials are untouched")
        }
        guard let secret, let key = Data(base64Encoded: String(cString: secret)), key.count == 32 else {
            throw .storeUnreadable(path: descriptorPath, reason: "the keyring has no item \"signin store key\" for this store (store \(storeID)); it was removed or the keyring was reset. The credentials are untouched but cannot be decrypted without it; signing out removes them")
        }
        return Array(key)
    }

    static func clear(storeID: String) throws(SignInError) {
        var error: UnsafeMutablePointer<CChar>?
        defer { signin_secret_free(error) }
        guard signin_secret_clear(storeID, &error) == 0 else { throw .storeUnwritable(path: "Secret Service", reason: error.map { String(cString: $0) } ?? "") }
    }

    /// Removes every key of the store in `directory`, whatever its ID (an interrupted move's included). Nothing
    /// happens when no Secret Service is reachable.
    static func clearAll(directory: String) {
        var error: UnsafeMutablePointer<CChar>?
        defer { signin_secret_free(error) }
        _ = signin_secret_clear_folder(directory, &error)
    }

    /// libsecret's and D-Bus's words, with what to do when no keyring runs in this session.
    static func explained(_ reason: String) -> String {
        let lower = reason.lowercased()
        if lower.contains("autolaunch") || lower.contains("dbus_session_bus_address") || lower.contains("not provided by any .service")
            || lower.contains("was not provided") || lower.contains("no such interface") || lower.contains("libsecret is not installed")
            || lower.contains("could not connect") {
            return "no Secret Service runs in this session (start a keyring such as gnome-keyring, or set \"key_storage\": \"passphrase\")"
        }
        return reason
    }
}
