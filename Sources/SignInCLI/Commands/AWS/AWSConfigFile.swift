import SignInKit

/// aws-cli's shared configuration file (`~/.aws/config`, or `$AWS_CONFIG_FILE`): INI sections `[default]` and
/// `[profile NAME]` of `key = value` lines. Edited line by line, so comments, other profiles and other keys of the
/// profile stay exactly as they were.
struct AWSConfigFile {
    var lines: [String]

    init(_ text: String) { lines = text.isEmpty ? [] : text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) }

    var text: String {
        let t = lines.joined(separator: "\n")
        return t.hasSuffix("\n") || t.isEmpty ? t : t + "\n"
    }

    /// The file's path for `environment`.
    static func path(_ environment: [String: String]) -> String {
        if let p = environment["AWS_CONFIG_FILE"], !p.isEmpty { return p }
        return ProcessEnvironment.home(environment) + "/.aws/config"
    }

    /// A profile name aws-cli can be given (`--profile P`, `AWS_PROFILE`) and this file can hold.
    static func isProfileName(_ s: String) -> Bool {
        (1...64).contains(s.count) && s.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "_-.@+".contains($0)) }
    }

    private static func sectionName(_ line: String) -> String? {
        let t = line.trimmingWhitespace
        guard t.hasPrefix("["), t.hasSuffix("]") else { return nil }
        let inner = t.dropFirst().dropLast().trimmingWhitespace
        if inner == "default" { return "default" }
        guard inner.hasPrefix("profile ") else { return "\u{0}" + inner }
        return inner.dropFirst("profile ".count).trimmingWhitespace
    }

    private static func key(_ line: String) -> String? {
        let t = line.trimmingWhitespace
        guard !t.hasPrefix("#"), !t.hasPrefix(";"), let eq = t.firstIndex(of: "=") else { return nil }
        return t[..<eq].trimmingWhitespace
    }

    /// Sets `key` in `profile`'s section (added at the end when there is none), replacing the key's line where it is
    /// there; with `onlyIfAbsent`, a value already there stays. Returns the value it replaced.
    /// A value with a control character (a newline above all) is refused, not written: it would end the line and
    /// could add a section or key of its own (a `credential_process` that runs any command).
    @discardableResult
    mutating func set(_ key: String, _ value: String, profile: String, onlyIfAbsent: Bool = false) throws(SignInError) -> String? {
        try Self.refuseControlCharacters(value, key: key)
        try Self.refuseControlCharacters(profile, key: "the profile's name")
        let line = "\(key) = \(value)"
        guard let header = lines.firstIndex(where: { Self.sectionName($0) == profile }) else {
            while let last = lines.last, last.trimmingWhitespace.isEmpty { lines.removeLast() }
            if !lines.isEmpty { lines.append("") }
            lines += [profile == "default" ? "[default]" : "[profile \(profile)]", line]
            return nil
        }
        var end = lines.index(after: header)
        while end < lines.endIndex, Self.sectionName(lines[end]) == nil { end += 1 }
        if let i = lines[(header + 1)..<end].firstIndex(where: { Self.key($0) == key }) {
            let old = lines[i]
            if !onlyIfAbsent { lines[i] = line }
            return old
        }
        // After the section's last non-blank line.
        var at = end
        while at > header + 1, lines[at - 1].trimmingWhitespace.isEmpty { at -= 1 }
        lines.insert(line, at: at)
        return nil
    }

    /// Refuses `value` for `key` when it holds a control character: every value signin writes into another
    /// program's file is one line of that file.
    static func refuseControlCharacters(_ value: String, key: String) throws(SignInError) {
        guard value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control || $0 == "\u{2028}" || $0 == "\u{2029}" }) else { return }
        throw .unsupported(reason: "\(key) for aws-cli's configuration would hold a control character (a line break, say): \"\(value.withoutControlCharacters)\"; nothing was written")
    }

    /// `args` as one `credential_process` value: botocore splits it as a POSIX shell would (shlex), so an argument
    /// with anything but plain characters is single-quoted.
    static func commandLine(_ args: [String]) -> String {
        args.map { a in
            let plain = !a.isEmpty && a.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "@%+=:,./_-".contains($0)) }
            return plain ? a : "'" + a.replacing("'", with: #"'"'"'"#) + "'"
        }.joined(separator: " ")
    }
}
