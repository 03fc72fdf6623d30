import SignInKit

/// `--role-arn`, `--duration` and `--session-name`, as `aws-credential-process` and `aws configure` read them.
struct AWSRoleOptions: OptionGroup {
    static let options = [roleARN, duration, sessionName]
    static let roleARN = OptionSpec("--role-arn", value: "ARN", "The AWS role to assume (arn:aws:iam::ACCOUNT:role/NAME)")
    static let duration = OptionSpec("--duration", value: "TIME", "How long the role's credentials last: 15m to 12h, as 3600, 3600s, 60m or 1h (default 1h)")
    static let sessionName = OptionSpec("--session-name", value: "NAME", "The role session's name (default: your e-mail)")

    let roleARN: String
    let durationSeconds: Int
    let sessionName: String?

    init(_ a: Arguments) throws(UsageError) {
        let (arn, duration, sessionName) = (a.value(Self.roleARN), a.value(Self.duration), a.value(Self.sessionName))
        guard let arn else { throw UsageError("--role-arn ARN is needed: the role to assume (arn:aws:iam::ACCOUNT:role/NAME)") }
        roleARN = arn
        durationSeconds = try duration.map { text throws(UsageError) in
            guard let s = Self.seconds(text) else { throw UsageError("--duration \"\(text.withoutControlCharacters)\" is not a time such as 3600, 3600s, 60m or 1h") }
            return s
        } ?? 3600
        self.sessionName = sessionName
        let request = AWSRoleRequest(roleARN: roleARN, sessionName: sessionName, duration: .seconds(durationSeconds))
        if let problem = request.problem { throw UsageError(problem) }
    }

    /// The request for `account`, as fresh as `forceRefresh` says.
    func request(account: String?, forceRefresh: Bool = false) -> AWSRoleRequest {
        AWSRoleRequest(roleARN: roleARN, sessionName: sessionName, duration: .seconds(durationSeconds), forceRefresh: forceRefresh, account: account)
    }

    /// `3600`, `3600s`, `60m`, `1h`.
    static func seconds(_ text: String) -> Int? {
        let units: [Character: Int] = ["s": 1, "m": 60, "h": 3600]
        guard let last = text.last else { return nil }
        let (digits, unit) = units[last].map { (text.dropLast(), $0) } ?? (Substring(text), 1)
        guard !digits.isEmpty, digits.count <= 6, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let n = Int(digits) else { return nil }
        return n * unit
    }
}
