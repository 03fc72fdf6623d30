// swift-tools-version:6.0
// libFuzzer targets for SignInKit's parsers. Build and run with Fuzz/run (see README).
import PackageDescription

let package = Package(
    name: "SignInFuzz",
    dependencies: [.package(name: "signin", path: "..")],
    targets: [
        .executableTarget(name: "FuzzListener", dependencies: [.product(name: "SignInKit", package: "signin")]),
        .executableTarget(name: "FuzzProvider", dependencies: [.product(name: "SignInKit", package: "signin")]),
        .executableTarget(name: "FuzzCloud", dependencies: [.product(name: "SignInKit", package: "signin")]),
        .executableTarget(name: "FuzzAgent", dependencies: [.product(name: "SignInKit", package: "signin")]),
        .executableTarget(name: "FuzzStored", dependencies: [.product(name: "SignInKit", package: "signin")]),
        .executableTarget(name: "FuzzMcp", dependencies: [.product(name: "SignInMCP", package: "signin")]),
    ],
    swiftLanguageModes: [.v6]
)
