import SignInBase
import SignInTransport
import SignInGrant

/// What signin checks of Google Cloud names before they go into a URL: a service account's e-mail and a project ID.
public enum ServiceAccounts {
    /// `NAME@DOMAIN` with letters, digits, `-`, `_` and `.` only, and a dot in the domain
    /// (`deployer@my-project.iam.gserviceaccount.com`).
    public static func isEmail(_ s: String) -> Bool { TokenRequest.isServiceAccountName(s) }

    /// A Google Cloud project ID: 6 to 30 lowercase letters, digits and hyphens, starting with a letter
    /// (older projects may also hold a domain prefix, `example.com:project`).
    public static func isProjectID(_ s: String) -> Bool {
        let id = s.split(separator: ":").last.map(String.init) ?? s
        guard (6...30).contains(id.count), let first = id.first, first.isLetter, first.isLowercase else { return false }
        return s.allSatisfy { $0.isASCII && (($0.isLetter && $0.isLowercase) || $0.isNumber || "-.:".contains($0)) }
    }
}
