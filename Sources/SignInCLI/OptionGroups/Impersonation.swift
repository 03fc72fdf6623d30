import SignInKit

/// `--impersonate-service-account SA[,SA...]`, as gcloud's: the commands that hand out tokens hand out the service
/// account's instead, minted with the person's grant (the last e-mail is the target, any before it delegates).
struct Impersonation: OptionGroup {
    static let option = OptionSpec("--impersonate-service-account", value: "SA", "Hand out this service account's tokens, minted with your grant (a comma list: a delegation chain; also impersonate_service_account)")

    /// The chain given on the command line (nil: as the configuration says, which the one token path decides,
    /// `TokenRequest.Principal.configured`). Checked here, before anything runs.
    let chain: [String]?

    init(_ a: Arguments) throws(UsageError) { chain = try Self.chain(a) }

    private static func chain(_ a: Arguments) throws(UsageError) -> [String]? {
        guard let v = a.value(option) else { return nil }
        let items = v.split(separator: ",").map { $0.trimmingWhitespace }
        guard !items.isEmpty else { throw UsageError("--impersonate-service-account needs a service account's e-mail") }
        if let bad = items.first(where: { !ServiceAccounts.isEmail($0) }) {
            throw UsageError("--impersonate-service-account: \"\(bad.withoutControlCharacters)\" is not a service account's e-mail (NAME@PROJECT.iam.gserviceaccount.com)")
        }
        return items
    }
}
