import FoundationEssentials
@_spi(CLI) import SignInKit

#if canImport(Glibc)
import Glibc
#endif

/// What the bridges that hand signin's tokens to other programs share. Each goes through the same library path as
/// `signin token` (`SignInClient.restore`): one refresh for many parallel callers, the same exit codes, no secret in
/// an error, never a token in another process's arguments.
enum Bridge {
    /// A fresh token of the account, or, when signing in is needed and allowed, a sign-in first.
    ///
    /// 1. Restore (no browser): a fresh token, refreshed when it expires within `--min-ttl`.
    /// 2. Not signed in (exit 3): with `interactive`, say so on standard error and sign in through the browser,
    ///    then use the new sign-in's token; otherwise throw, so a script is never stopped by a browser.
    static func freshUser(_ c: Context, _ freshness: Freshness, token: TokenKind, interactive: Bool) throws(SignInError) -> SignInUser {
        do {
            return try c.restore(freshness, token)
        } catch .noPreviousSignIn(let reason) {
            guard interactive else { throw .noPreviousSignIn(reason: reason) }
            err("signin: signing in is needed first (\(reason.description.withoutControlCharacters)).")
            var opts = SignInOptions()
            opts.openBrowser = !c.browsing.headless
            opts.loginHint = c.account
            _ = try Login.signIn(c.client, opts)
            return try c.restore(Freshness(minTTL: freshness.minTTL), token)
        }
    }
}
