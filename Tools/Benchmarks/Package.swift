// swift-tools-version:6.0
// The benchmark of this library against SQLite (through GRDB), in its own package so that library
// users never build GRDB. Run from the repository root:
//   swift run -c release --package-path Tools/Benchmarks realm-vs-sqlite [--quick] [--json FILE] [--svg FILE]
import Foundation
import PackageDescription

// A path dependency's identity is its folder's name; CI clones into folders of other names.
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

let package = Package(
    name: "RealmBenchmarks",
    products: [
        .executable(name: "realm-vs-sqlite", targets: ["RealmVsSQLite"]),
        .executable(name: "sync-bench", targets: ["SyncBench"]),
    ],
    dependencies: [
        .package(path: "../.."),
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.0"),
    ],
    targets: [
        .executableTarget(
            name: "RealmVsSQLite",
            dependencies: [
                .product(name: "RealmSwift", package: root.lastPathComponent),
                // W9's engine variant opens the file without the object layer (what the tools do).
                .product(name: "RealmStorage", package: root.lastPathComponent),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            path: "Sources/RealmVsSQLite",
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // The sync benchmark: a realm-sync process, PostgreSQL and clients (issue 51).
        .executableTarget(
            name: "SyncBench",
            dependencies: [
                .product(name: "RealmSwift", package: root.lastPathComponent),
                .product(name: "RealmSwiftSync", package: root.lastPathComponent),
                .product(name: "RealmSyncProtocol", package: root.lastPathComponent),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            path: "Sources/SyncBench",
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
    ]
)
