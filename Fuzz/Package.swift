// swift-tools-version: 6.0
// libFuzzer executables, one per fuzz target; their bodies live in the root package's
// RealmFuzzHarness target (Fuzz/Harness) so that `swift test` replays the corpora too.
// Build and run with Fuzz/run.sh (release, `--sanitize fuzzer -Xswiftc -sanitize=fuzzer,address`).
import Foundation
import PackageDescription

// A path dependency's identity is its folder's name, which differs between clones.
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent

let targets = ["FileOpen", "SegmentDecode", "Predicate", "Operations"]

let package = Package(
    name: "RealmFuzz",
    products: targets.map { .executable(name: $0, targets: [$0]) },
    dependencies: [.package(path: "..")],
    targets: targets.map {
        .executableTarget(
            name: $0,
            dependencies: [.product(name: "RealmFuzzHarness", package: root)],
            path: "Targets/\($0)"
        )
    },
    swiftLanguageModes: [.v6]
)
