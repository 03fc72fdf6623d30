import FoundationEssentials
@_spi(CLI) import SignInKit

#if canImport(Glibc)
import Glibc
#endif

/// What the bridges that hand signin's tokens to other programs share. Each goes through the same library path as
/// `signin token` (a `TokenSource`, then `SignInClient.token`): one refresh for many parallel callers, the same exit
/// codes, no secret in an error, never a token in another process's arguments.
enum Bridge {}
