import SignInKit

#if canImport(Glibc)
import Glibc
#endif

/// Where the store's passphrase comes from: a script's file descriptor (`--passphrase-fd N`, one line, read
/// once), else the terminal (`/dev/tty`, without echo; a new one is asked twice), else nowhere.
enum Passphrase {
    static func provider(fd: Int32?) -> PassphraseProvider {
        let cache = PassphraseCache()
        return { purpose in
            // The static half of the release build reads no passphrase: the dynamic half, which may need it again
            // (for the network), is the one to read it, once.
            HandOverPoint.require(.passphrase)
            if let fd {
                if let known = cache.value { return purpose == .unlock(attempt: 1) || purpose == .create ? known : nil }
                guard let line = readLine(fd: fd) else { return nil }
                cache.value = line
                return line
            }
            return fromTerminal(purpose)
        }
    }

    static func fromTerminal(_ purpose: PassphrasePurpose) -> String? {
        let tty = Posix.open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard tty >= 0 else { return nil }
        defer { Posix.close(tty) }
        func ask(_ prompt: String) -> String? {
            FileIO.writeAll(tty, prompt)
            let hidden = HiddenInput.echoOff(tty)
            let line = readLine(fd: tty)
            if hidden { HiddenInput.restore() }
            FileIO.writeAll(tty, "\n")
            return line
        }
        switch purpose {
        case .create:
            for _ in 0..<3 {
                guard let first = ask("New passphrase for signin's store key (at least \(StorePassphrase.minimumLength) characters): ") else { return nil }
                if let problem = StorePassphrase.problem(first) {
                    FileIO.writeAll(tty, "\(problem)\n")
                    continue
                }
                guard let again = ask("The same passphrase again: ") else { return nil }
                if first == again { return first }
                FileIO.writeAll(tty, "They differ; once more.\n")
            }
            return nil
        case .unlock(let attempt):
            if attempt > 1 { FileIO.writeAll(tty, "That passphrase does not unlock the key.\n") }
            return ask("Passphrase for signin's store key: ")
        }
    }
}

/// The descriptor's line, kept for the second question of the same run (read only once).
final class PassphraseCache: @unchecked Sendable {
    var value: String?
}
