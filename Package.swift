// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "signin",
    products: [
        .library(name: "SignInKit", targets: ["SignInKit"]),
        // Authorized URLSession requests with one retry on a refused token; apart, so that only programs that use
        // URLSession load Foundation's networking.
        .library(name: "SignInKitURLSession", targets: ["SignInKitURLSession"]),
        // An MCP client transport (streamable HTTP and HTTP+SSE, signed in through SignInKit), and the stdio bridge
        // `signin mcp URL` runs: a room of its own above SignInKit, so only programs that speak MCP build it.
        .library(name: "SignInMCP", targets: ["SignInMCP"]),
        .executable(name: "signin", targets: ["signin"]),
    ],
    targets: [
        // libcurl's headers at build time (apt: libcurl4-openssl-dev); the library itself is loaded on first
        // use, so commands that need no network never load it.
        .target(name: "CSignInCurl", linkerSettings: [.linkedLibrary("dl")]),
        .systemLibrary(
            name: "CSignInOpenSSL", pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]),
        // Signal holding and spawn file actions, which need C (an async-signal-safe handler, a glibc extension).
        .target(name: "CSignInSystem", linkerSettings: [.linkedLibrary("dl")]),
        // SignInKit in layers, each a target that may use only those above it here, so that the compiler refuses an
        // upward reference (as swift-nio splits NIOCore, NIOPosix and NIOHTTP1). SignInKit re-exports them all:
        // `import SignInKit` stays the one import an adopter writes. docs/layout.md has what each holds.
        // Errors, values (JSON, tokens), OpenSSL's primitives, and the system layer: every libc call from Swift.
        .target(name: "SignInBase", dependencies: ["CSignInOpenSSL", "CSignInSystem"]),
        // libcurl, and the loopback HTTP server every local server shares.
        .target(name: "SignInTransport", dependencies: ["SignInBase", "CSignInCurl", "CSignInSystem"]),
        // The specs, named after them; signatures, proof keys and the TPM; the configuration they speak.
        .target(name: "SignInProtocol", dependencies: ["SignInBase", "SignInTransport", "CSignInOpenSSL", "CSignInSystem"]),
        // The encrypted credential store and where its key lives.
        .target(name: "SignInStorage", dependencies: ["SignInBase", "SignInProtocol", "CSignInOpenSSL", "CSignInSystem"]),
        // The person's grant as a provider family sees it: what a consumer asks of the one token path
        // (`TokenRequest`), its answer, and `TokenFamily`, the one protocol through which a family plugs in.
        .target(name: "SignInGrant", dependencies: ["SignInBase", "SignInTransport", "SignInProtocol", "SignInStorage"]),
        // Provider families, each a room of its own above the grant: its services, its configuration section, the
        // tokens it derives from the person's grant. The client composes them (SignInKit's `TokenFamilies`); none
        // knows another, and none calls the client but through `PersonGrant`.
        .target(name: "SignInGoogle", dependencies: ["SignInBase", "SignInTransport", "SignInProtocol", "SignInStorage", "SignInGrant"]),
        .target(name: "SignInAWS", dependencies: ["SignInBase", "SignInTransport", "SignInProtocol", "SignInStorage", "SignInGrant"]),
        // MCP's enterprise-managed authorization: one sign-in at the company's IdP, an ID-JAG per MCP server.
        .target(name: "SignInEnterprise", dependencies: ["SignInBase", "SignInTransport", "SignInProtocol", "SignInStorage", "SignInGrant", "SignInAPIAccess"]),
        // Signing in to an API from its address alone, as MCP's authorization asks: the API's metadata (RFC 9728),
        // the client known at its server (RFC 7591, client ID metadata documents), its challenges (WWW-Authenticate)
        // and what the store keeps of them. A room above the store, beside the families; the client composes it.
        .target(name: "SignInAPIAccess", dependencies: ["SignInBase", "SignInTransport", "SignInProtocol", "SignInStorage"]),
        // The client and its use cases, the agent; the families composed.
        .target(name: "SignInKit", dependencies: ["SignInBase", "SignInTransport", "SignInProtocol", "SignInStorage", "SignInGrant", "SignInGoogle", "SignInAWS", "SignInEnterprise", "SignInAPIAccess", "CSignInCurl", "CSignInOpenSSL", "CSignInSystem"]),
        // MCP's transports, signed in: an MCP client's transport to a remote server and the stdio bridge over it.
        .target(name: "SignInMCP", dependencies: ["SignInKit", "SignInBase", "SignInTransport"]),
        // The command line as a library (each command a type, its parsing and checks), so they get unit tests;
        // the executable is only main.swift.
        .target(name: "SignInCLI", dependencies: ["SignInKit", "SignInMCP"]),
        .target(name: "SignInKitURLSession", dependencies: ["SignInKit"]),
        .executableTarget(name: "signin", dependencies: ["SignInCLI", "SignInKit"]),
        // README's library example, compiled so it cannot drift from the API.
        .executableTarget(name: "signin-hello", dependencies: ["SignInKit"], path: "Examples/hello"),
        // README's library tasks, compiled for the same reason.
        .executableTarget(name: "signin-tasks", dependencies: ["SignInKit", "SignInKitURLSession"], path: "Examples/tasks"),
        // An MCP client on SignInKit's `APIAuthorizer` (JSON-RPC over streamable HTTP), run by the tests against the MCP
        // Python SDK's server.
        .executableTarget(name: "signin-mcp-client", dependencies: ["SignInKit", "SignInKitURLSession"], path: "Examples/mcp-client"),
        // A long-running program on SignInKit that the tests signal mid-refresh (SignalHolding in an async program).
        .executableTarget(name: "signin-test-worker", dependencies: ["SignInKit"], path: "Tests/Fixtures/worker"),
        .testTarget(name: "SignInKitTests", dependencies: ["SignInKit", "SignInBase", "SignInTransport", "SignInProtocol", "SignInStorage", "SignInGrant", "SignInGoogle", "SignInAWS", "SignInAPIAccess", "CSignInOpenSSL", "SignInCLI", "SignInMCP"]),
        .testTarget(name: "EndToEndTests", dependencies: ["signin", "signin-hello", "signin-tasks", "signin-mcp-client", "signin-test-worker", "SignInKit", "SignInBase", "SignInTransport", "SignInProtocol", "SignInStorage", "SignInGrant", "SignInGoogle", "SignInAWS", "SignInAPIAccess", "SignInKitURLSession"]),
    ],
    swiftLanguageModes: [.v6]
)
