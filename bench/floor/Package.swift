// swift-tools-version:6.0
// The floor for signin's benchmark: a trivial Swift program that imports Foundation and prints one line,
// built exactly as signin is (release, static Swift standard library).
import PackageDescription

let package = Package(name: "floor", targets: [.executableTarget(name: "floor")])
