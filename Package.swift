// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "RealmSwiftLinux",
    products: [
        .library(name: "RealmSwift", targets: ["RealmSwift"]),
        .library(name: "RealmStorage", targets: ["RealmStorage"]),
        .executable(name: "realm-demo", targets: ["RealmDemo"]),
        .executable(name: "storage-demo", targets: ["StorageDemo"]),
        .executable(name: "storage-bench", targets: ["StorageBench"]),
        .executable(name: "realm-bench", targets: ["RealmBench"]),
    ],
    targets: [
        .systemLibrary(
            name: "CLZ4",
            pkgConfig: "liblz4",
            providers: [.apt(["liblz4-dev"])]
        ),
        .target(
            name: "RealmStorage",
            dependencies: ["CLZ4"]
        ),
        .target(
            name: "RealmQuery",
            dependencies: ["RealmStorage"]
        ),
        .target(
            name: "RealmSwift",
            dependencies: ["RealmStorage", "RealmQuery"]
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
            dependencies: ["RealmSwift"],
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
            name: "RealmTestSupport",
            path: "Tests/RealmTestSupport"
        ),
        .testTarget(
            name: "RealmStorageTests",
            dependencies: ["RealmStorage", "StorageCrashWriter", "RealmTestSupport"]
        ),
        .testTarget(
            name: "RealmQueryTests",
            dependencies: ["RealmQuery", "RealmStorage", "RealmTestSupport"]
        ),
        .testTarget(
            name: "RealmSwiftTests",
            dependencies: ["RealmSwift", "RealmTestSupport"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
