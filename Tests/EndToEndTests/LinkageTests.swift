import Foundation
import Testing

/// What every start of `signin` loads: FoundationEssentials, never the full Foundation (with ICU's data) or
/// FoundationNetworking, which a cached `signin token` would load for nothing (2.6 to 3.9 times its start-up, and 78 MB
/// where 29 MB do in the release build). One `import Foundation` anywhere in the executable's modules brings them.
@Suite struct LinkageTests {
    @Test func theExecutableLinksNoFullFoundation() throws {
        let r = try Subprocess.run("/usr/bin/readelf", ["-d", Paths.signin])
        #expect(r.status == 0, "\(r.stderr)")
        let needed = r.stdout.split(separator: "\n").filter { $0.contains("(NEEDED)") }.map { String($0.split(separator: "[").last ?? "").trimmingCharacters(in: ["]"]) }
        #expect(needed.contains("libFoundationEssentials.so") || !needed.contains { $0.hasPrefix("libswiftCore") }, "a dynamic build: \(needed)")
        for library in ["libFoundation.so", "libFoundationNetworking.so", "libFoundationInternationalization.so", "lib_FoundationICU.so"] {
            #expect(!needed.contains(library), "signin links \(library): \(needed)")
        }
    }
}
