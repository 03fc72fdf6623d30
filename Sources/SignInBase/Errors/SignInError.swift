import FoundationEssentials

/// Every failure `SignInKit` reports. Each case is something a caller can act on, and each
/// `message` is safe to show a person: no token, code or secret is ever part of it.
public enum SignInError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No signed-in user to use: `reason` says why (nothing stored, no account current, the grant ended, ...).
    case noPreviousSignIn(reason: NotSignedInReason)
    /// The configuration file does not exist.
    case configNotFound(file: String)
    /// The person declined in the browser, or the sign-in was interrupted (Ctrl-C, task cancellation).
    case canceled(reason: String)
    /// Nobody completed the sign-in within the allowed time (`after`).
    case timedOut(after: Duration)
    /// The provider answered with an OAuth error or with something that is not a valid answer.
    case providerError(endpoint: String, code: String, detail: String?)
    /// The provider could not be reached (DNS, refused, TLS, timeout, dropped connection).
    case networkUnavailable(endpoint: String, detail: String)
    /// The ID token failed verification (signature, issuer, audience, expiry, nonce, ...).
    case invalidIDToken(reason: String)
    /// The credential store exists but cannot be used safely; it has been left untouched.
    case storeUnreadable(path: String, reason: String)
    /// The credential store cannot be written; previous credentials are intact.
    case storeUnwritable(path: String, reason: String)
    /// The configuration file or a value in it is wrong.
    case configInvalid(file: String, field: String?, reason: String)
    /// A sign-in was asked to add scopes, but a different account signed in.
    case mismatchWithCurrentUser(expected: String, actual: String)
    /// Every requested scope is already granted.
    case scopesAlreadyGranted
    /// `addScopes` ended with fewer scopes than asked: these were not granted (the sign-in was saved with the others).
    case scopesNotGranted(missing: [String])
    /// An authorization callback was refused (wrong state, issuer mix-up, malformed).
    case callbackRejected(reason: String)
    /// The provider does not offer what was asked for (for example, no device authorization endpoint).
    case unsupported(reason: String)
    /// The system refused something the sign-in needs (a socket, random bytes, a cipher).
    case system(reason: String)
    /// `account` names no stored account; `known` lists those stored for this configuration.
    case accountNotFound(account: String, known: [String])
    /// `account` names more than one stored account (an e-mail used by two); name one by its `sub`.
    case ambiguousAccount(account: String, matches: [String])
    /// The store's key is under a passphrase that was wrong, or a new one was refused (too short, not repeated).
    case passphraseRefused(reason: String)
    /// A passphrase is needed (for the key described at `path`, or a new key) and there is no way to ask for one:
    /// no terminal, and none given (`PassphraseProvider` answered nil).
    case passphraseUnavailable(path: String)
    /// The grant could not be revoked at the provider (`cause` says why); `disconnect` changed nothing here.
    indirect case revocationFailed(cause: SignInError)
    /// A loopback address a local server needs (`address`, such as `[::1]:8080`) cannot be had: `reason` says who
    /// holds it, or why using it would be unsafe. Nothing was sent anywhere.
    case listenerUnavailable(address: String, reason: String)
    /// `endpoint` (the provider, or a forwarded session's agent) refused for now because it was asked too often
    /// (HTTP 429); `retryAfterSeconds` is how long it asked to be left alone (`Retry-After`), when it said.
    /// Nothing changed locally.
    case rateLimited(endpoint: String, retryAfterSeconds: Int?)
    /// The provider answered a refresh with a new refresh token (the old one is now spent), and it could not be
    /// saved at `path` (`reason`). The stored sign-in will likely need a new sign-in at its next refresh.
    case rotatedGrantUnsaved(path: String, reason: String)
    /// `endpoint` refused to issue a token for `target`, a resource (RFC 8707) or an audience (RFC 8693) it does not
    /// know or will not serve this client (`invalid_target`), or, with `detail` saying so, cannot exchange tokens at
    /// all. Nothing was stored.
    case targetRefused(endpoint: String, target: String, detail: String?)

    /// A sentence a person understands, without secrets. Text that came from a provider or a callback is in
    /// it with its control characters removed, so printing it cannot rewrite a terminal.
    public var description: String { sentence.withoutControlCharacters }

    private var sentence: String {
        switch self {
        case .noPreviousSignIn(let reason): return "Not signed in: \(reason)"
        case .configNotFound(let file): return "Configuration \(file): file not found"
        case .canceled(let reason): return reason.prefix(1).uppercased() + reason.dropFirst() + "."
        case .timedOut(let after):
            return "Timed out after \(after.components.seconds) s waiting for the sign-in in the browser. If the browser shows an error page of the provider's, the provider refused the sign-in request (the page says why)."
        case .providerError(let endpoint, let code, let detail):
            // An endpoint named with its owner ("the API's metadata (URL)", "the authorization server X") reads as it is.
            let who = endpoint.hasPrefix("the ") ? "The " + endpoint.dropFirst(4) : "The provider's \(endpoint)"
            return "\(who) answered with error \"\(code)\"" + (detail.map { ": \($0)" } ?? ".")
        case .networkUnavailable(let endpoint, let detail):
            return "Could not reach \(endpoint): \(detail)"
        case .invalidIDToken(let reason): return "The ID token was refused: \(reason)"
        case .storeUnreadable(let path, let reason): return "Cannot use the credential store \(path): \(reason)"
        case .storeUnwritable(let path, let reason):
            return "Cannot write the credential store \(path): \(reason) (previous credentials are intact)"
        case .configInvalid(let file, let field, let reason):
            return "Configuration \(file)" + (field.map { ", field \"\($0)\"" } ?? "") + ": \(reason)"
        case .mismatchWithCurrentUser(let expected, let actual):
            return "Signed in as \(actual), but the current user is \(expected); nothing was changed."
        case .scopesAlreadyGranted: return "All requested scopes are already granted."
        case .scopesNotGranted(let missing): return "The provider did not grant \(missing.joined(separator: ", ")); the sign-in was kept with the scopes it granted."
        case .callbackRejected(let reason): return "The sign-in callback was refused: \(reason)"
        case .unsupported(let reason): return reason
        case .system(let reason): return "System error: \(reason)"
        case .accountNotFound(let account, let known):
            return "No stored account is \"\(account)\"" + (known.isEmpty ? "; none is stored for this configuration." : ". Stored: \(known.joined(separator: "; ")).")
        case .ambiguousAccount(let account, let matches):
            return "\"\(account)\" names several accounts: \(matches.joined(separator: "; ")). Name one by its sub."
        case .passphraseRefused(let reason): return "The store key's passphrase: \(reason)"
        case .passphraseUnavailable(let path):
            return "The store key's passphrase: one is needed for the store key (\(path)) and there is no way to ask for it here (no terminal, and no passphrase given)"
        case .revocationFailed(let cause): return "Revoking the grant at the provider failed: \(cause.sentence)"
        case .listenerUnavailable(let address, let reason): return "Cannot listen on \(address): \(reason)."
        case .rotatedGrantUnsaved(let path, let reason):
            return "The provider issued a new refresh token, which replaces the stored one, and it could not be saved to \(path): \(reason). The stored sign-in may no longer refresh; if the next command says so, sign in again."
        case .targetRefused(let endpoint, let target, let detail):
            return "\(endpoint) will not issue a token for \(target)" + (detail.map { ": \($0)" } ?? "") + ". Its policy decides what this sign-in may reach: ask for a resource the sign-in asked for (`resources` in the configuration, then `signin login`) or an audience the provider serves this client; for an MCP server reached through the enterprise sign-in, your administrator decides."
        case .rateLimited(let endpoint, let after):
            return "\(endpoint) refused: asked too often (HTTP 429); " + (after.map { "it asks to wait \($0) s (Retry-After) before trying again." } ?? "try again later.")
        }
    }
}

extension SignInError: LocalizedError {
    /// The same sentence as `description`, for code that shows `localizedDescription`.
    public var errorDescription: String? { description }
}
