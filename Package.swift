// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "signin",
    products: [
        .library(name: "SignInKit", targets: ["SignInKit"]),
        .executable(name: "signin", targets: ["signin"]),
    ],
    targets: [
        .systemLibrary(
            name: "CCurl", pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(
            name: "COpenSSL", pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"])]),
        .target(name: "SignInKit", dependencies: ["CCurl", "COpenSSL"]),
        .executableTarget(name: "signin", dependencies: ["SignInKit"]),
        .testTarget(name: "SignInKitTests", dependencies: ["SignInKit", "COpenSSL"]),
        .testTarget(name: "EndToEndTests", dependencies: ["signin"]),
    ],
    swiftLanguageModes: [.v6]
)
