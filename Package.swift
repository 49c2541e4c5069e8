// swift-tools-version: 6.0
import PackageDescription

// The sync service (`realm-sync`, issue 51) and its tests build on SwiftNIO, Hummingbird,
// PostgresNIO and swift-crypto. An application that depends on the `RealmSwift` product never
// fetches or compiles them (SwiftPM resolves the dependencies of the products it uses); inside this
// repository, REALM_LOCAL_ONLY=1 leaves them out of a build altogether, as CI does for the
// sanitizer builds of the local database (CONTRIBUTING.md, "Sanitizers").
let withSync = Context.environment["REALM_LOCAL_ONLY"] == nil

let package = Package(
    name: "RealmSwiftLinux",
    products: [
        .library(name: "RealmSwift", targets: ["RealmSwift"]),
        .library(name: "RealmStorage", targets: ["RealmStorage"]),
        .executable(name: "realm-demo", targets: ["RealmDemo"]),
        .executable(name: "storage-demo", targets: ["StorageDemo"]),
        .executable(name: "storage-bench", targets: ["StorageBench"]),
        .executable(name: "realm-bench", targets: ["RealmBench"]),
        .executable(name: "realm-dump", targets: ["RealmDump"]),
        .executable(name: "realm-compact", targets: ["RealmCompact"]),
        .library(name: "RealmSyncProtocol", targets: ["RealmSyncProtocol"]),
        // The fuzz targets' bodies, for the libFuzzer executables of the nested package Fuzz/.
        .library(name: "RealmFuzzHarness", targets: ["RealmFuzzHarness"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        // What an operator needs to know (recovery, damage, compaction, refused writes, slow
        // commits) and the store's numbers, the server-Swift way; free without a backend.
        .package(url: "https://github.com/apple/swift-log", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.4.0"),
        // `swift package generate-documentation` (the DocC catalogs; CI builds them with no warning).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.4.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CLZ4",
            pkgConfig: "liblz4",
            providers: [.apt(["liblz4-dev"])]
        ),
        // Linux file calls the Glibc overlay does not export (`sync_file_range`); header only.
        .systemLibrary(name: "CLinuxIO"),
        .target(
            name: "RealmStorage",
            dependencies: [
                "CLZ4", "CLinuxIO", .product(name: "Logging", package: "swift-log"), .product(name: "Metrics", package: "swift-metrics"),
            ]
        ),
        .target(
            name: "RealmQuery",
            dependencies: ["RealmStorage"]
        ),
        // The sync protocol's messages and clock (Spec/SYNC.md), shared by the sync client and
        // server; plain Swift, no networking, so it costs the local build nothing.
        .target(name: "RealmSyncProtocol"),
        .target(
            name: "RealmSwift",
            dependencies: ["RealmStorage", "RealmQuery", .product(name: "Logging", package: "swift-log")]
        ),
        .target(
            name: "RealmTools",
            dependencies: ["RealmStorage", "RealmQuery", .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),
        .executableTarget(
            name: "RealmDump",
            dependencies: ["RealmTools", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Tools/realm-dump"
        ),
        .executableTarget(
            name: "RealmCompact",
            dependencies: ["RealmTools", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Tools/realm-compact"
        ),
        .executableTarget(
            name: "RealmDemo",
            dependencies: ["RealmSwift"],
            path: "Tools/realm-demo"
        ),
        .executableTarget(
            name: "StorageDemo",
            dependencies: ["RealmStorage"],
            path: "Tools/storage-demo"
        ),
        .executableTarget(
            name: "RealmBench",
            dependencies: ["RealmSwift", "RealmStorage"],
            path: "Tools/realm-bench"
        ),
        .executableTarget(
            name: "StorageBench",
            dependencies: ["RealmStorage"],
            path: "Tools/storage-bench"
        ),
        .executableTarget(
            name: "StorageCrashWriter",
            dependencies: ["RealmStorage"],
            path: "Tests/StorageCrashWriter"
        ),
        .target(
            name: "RealmFuzzHarness",
            dependencies: ["RealmStorage", "RealmQuery"],
            path: "Fuzz/Harness"
        ),
        .testTarget(
            name: "FuzzReplayTests",
            dependencies: ["RealmFuzzHarness", "RealmStorage", "RealmTestSupport"]
        ),
        .target(
            name: "RealmTestSupport",
            path: "Tests/RealmTestSupport"
        ),
        .testTarget(
            name: "RealmStorageTests",
            dependencies: [
                "RealmStorage", "StorageCrashWriter", "RealmTestSupport", .product(name: "Logging", package: "swift-log"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ]
        ),
        .testTarget(
            name: "RealmQueryTests",
            dependencies: ["RealmQuery", "RealmStorage", "RealmTestSupport"]
        ),
        .testTarget(
            name: "RealmToolsTests",
            dependencies: [
                "RealmTools", "RealmStorage", "RealmQuery", "RealmTestSupport", "RealmDump", "RealmCompact", "StorageCrashWriter",
            ],
            exclude: ["Golden", "ParquetCheck"]
        ),
        .testTarget(
            name: "RealmSwiftTests",
            dependencies: ["RealmSwift", "RealmQuery", "RealmTestSupport", .product(name: "Logging", package: "swift-log")]
        ),
        .testTarget(
            name: "RealmSyncProtocolTests",
            dependencies: ["RealmSyncProtocol", "RealmTestSupport"]
        ),
        // A RealmSwift-style app that must compile without a change of RealmSwift spelling (issue 29).
        .testTarget(
            name: "RealmSwiftCompatTests",
            dependencies: ["RealmSwift"]
        ),
    ],
    swiftLanguageModes: [.v6]
)

if withSync {
    package.platforms = [.macOS(.v15)]
    package.products += [
        .executable(name: "realm-sync", targets: ["RealmSyncCommand"]),
        .library(name: "RealmSyncServer", targets: ["RealmSyncServer"]),
        .library(name: "RealmSwiftSync", targets: ["RealmSwiftSync"]),
    ]
    package.dependencies += [
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.0"),
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.8.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.2"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.30.0"),
    ]
    package.targets += [
        // The sync server: sessions over WebSocket, every durable byte in PostgreSQL (Spec/SYNC.md).
        .target(
            name: "RealmSyncServer",
            dependencies: [
                "RealmSyncProtocol", "RealmQuery", "RealmStorage",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ]
        ),
        // The sync client in RealmSwift's names (App, User, subscriptions, SyncSession): only
        // applications that sync depend on it, and on SwiftNIO through it.
        .target(
            name: "RealmSwiftSync",
            dependencies: [
                "RealmSwift", "RealmStorage", "RealmQuery", "RealmSyncProtocol",
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // A child process of the client crash tests (killed while it writes and uploads).
        .executableTarget(
            name: "SyncClientWriter",
            dependencies: ["RealmSwift", "RealmSwiftSync"],
            path: "Tests/SyncClientWriter"
        ),
        .executableTarget(
            name: "RealmSyncCommand",
            dependencies: [
                "RealmSyncServer", .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            path: "Tools/realm-sync"
        ),
        .testTarget(
            name: "RealmSyncServerTests",
            dependencies: [
                "RealmSyncServer", "RealmSyncProtocol", "RealmSyncCommand", "RealmTestSupport", "RealmSwiftSync", "RealmSwift",
                "SyncClientWriter",
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            // The test certificate authority and the server's certificate (PEM, valid to 2126).
            exclude: ["Certificates"]
        ),
    ]
}
