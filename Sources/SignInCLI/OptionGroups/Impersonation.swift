import SignInKit

/// `--impersonate-service-account SA[,SA...]`, as gcloud's: the commands that hand out tokens hand out the service
/// account's instead, minted with the person's grant (the last e-mail is the target, any before it delegates).
struct Impersonation: OptionGroup {
    static let option = OptionSpec("--impersonate-service-account", value: "SA", check: .serviceAccountChain, "Hand out this service account's tokens, minted with your grant (a comma list: a delegation chain; also impersonate_service_account)")

    /// The chain given on the command line (nil: as the configuration says, which the one token path decides,
    /// `TokenRequest.Principal.configured`). Checked as the command line is read (`ValueCheck.serviceAccountChain`).
    let chain: [String]?

    static let options = [option]

    init(_ a: Arguments) { chain = a.value(Self.option).map(ValueCheck.serviceAccounts) }
}

extension TokenRequest.Principal {
    /// `--impersonate-service-account`'s chain as a principal: none given, as the configuration says; an empty one,
    /// the person; else that chain.
    init(given chain: [String]?) {
        guard let chain else { self = .configured; return }
        self = chain.isEmpty ? .person : .serviceAccount(chain: chain)
    }
}
