/// What the commands that read one stored account without network take (`whoami`, `status`): `--json`, and
/// `--resource URL` for the sign-in made for that API.
struct AccountReading: OptionGroup {
    static let options: [OptionSpec] = [.json, TokenTarget.apiAccountOption]

    let json: Bool
    /// `--resource URL`: the sign-in for that API.
    let apiResource: String?

    init(_ a: Arguments) {
        json = a.has(.json)
        apiResource = TokenTarget.apiAccount(a)
    }
}
