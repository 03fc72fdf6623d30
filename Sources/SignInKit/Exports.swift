// SignInKit is the one import an adopter writes: the layers below it are re-exported, so every public type keeps
// its place (`SignInKit.SignInError` still names it). The order, each target using only those before it:
// SignInBase (errors, values, the system layer) → SignInTransport (libcurl, the loopback server) → SignInProtocol
// (the specs, crypto, the configuration) → SignInStorage (the encrypted store and its key) → SignInGrant (the token
// path's request and answer, `PersonGrant`, `TokenFamily`) → the provider families, SignInGoogle and SignInAWS, each
// a room of its own, and SignInAPIAccess (an API's sign-in from its address: RFC 9728, 7591, WWW-Authenticate), beside
// them → SignInKit (the client and its use cases, the agent; the families composed in
// `TokenFamilies`). docs/layout.md has each room.
@_exported import SignInBase
@_exported import SignInProtocol
@_exported import SignInStorage
@_exported import SignInTransport
@_exported import SignInGrant
@_exported import SignInGoogle
@_exported import SignInAWS
@_exported import SignInEnterprise
@_exported import SignInAPIAccess
