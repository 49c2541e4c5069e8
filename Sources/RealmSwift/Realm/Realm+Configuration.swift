import Foundation
import Logging
import RealmStorage

/// The block run when a Realm is opened with a higher `schemaVersion` than its file.
public typealias MigrationBlock = @Sendable (_ migration: Migration, _ oldSchemaVersion: UInt64) -> Void

extension Realm {
    /// How to open a Realm: where the file is, which classes it holds, and how to migrate it.
    ///
    /// `@unchecked Sendable`: a value type whose closures are `@Sendable` and whose class list holds
    /// immutable metatypes.
    public struct Configuration: @unchecked Sendable {
        private static let defaultStorage = Locked<Configuration>(Configuration(fileURL: nil))

        /// The configuration `Realm()` uses; set it to change the default for the process.
        public static var defaultConfiguration: Configuration {
            get { defaultStorage.withLock { $0 } }
            set { defaultStorage.withLock { $0 = newValue } }
        }

        /// The file the Realm is stored in. Default: `default.realm` in the current directory.
        /// Setting it clears ``inMemoryIdentifier``.
        public var fileURL: URL? {
            didSet { if fileURL != nil { _inMemoryIdentifier = nil } }
        }
        private var _inMemoryIdentifier: String?
        /// A name for a Realm held in memory (a temporary file removed when the last instance with
        /// this identifier closes). Setting it clears ``fileURL``.
        public var inMemoryIdentifier: String? {
            get { _inMemoryIdentifier }
            set {
                _inMemoryIdentifier = newValue
                if newValue != nil { fileURL = nil }
            }
        }
        /// Open without ever writing the file.
        public var readOnly = false
        /// The version of the model classes; raise it (with a ``migrationBlock``) when they change.
        public var schemaVersion: UInt64 = 0
        /// Runs when the file's schema version is lower than ``schemaVersion``.
        public var migrationBlock: MigrationBlock?
        /// Delete the file instead of failing when the schema changed without a version bump.
        public var deleteRealmIfMigrationNeeded = false
        /// The classes this Realm holds. When nil, classes join the file as they are first used
        /// (Linux has no runtime to list every `Object` subclass).
        public var objectTypes: [ObjectBase.Type]?
        /// The most versions that may stay pinned (by open Realms and frozen objects) when a write
        /// commits; nil means unlimited.
        public var maximumNumberOfActiveVersions: UInt?
        /// Called on first open in the process with the file's total and used bytes; return true
        /// to compact the file.
        public var shouldCompactOnLaunch: (@Sendable (_ totalBytes: Int, _ usedBytes: Int) -> Bool)?
        /// When the file compacts itself while it is open, in the background (not in RealmSwift,
        /// whose files only compact on launch): by default when its dead bytes pass 4 MiB and
        /// three quarters of its live bytes. `.off` leaves compaction to ``shouldCompactOnLaunch`` and `realm-compact`.
        ///
        /// ```swift
        /// config.compactionPolicy = .automatic(minimumDeadBytes: 64 << 20, deadToLiveRatio: 1)
        /// config.compactionPolicy = .custom { usage in usage.deadBytes > 256 << 20 }
        /// ```
        public var compactionPolicy: CompactionPolicy = .automatic
        /// Where the file's store logs what an operator needs to know (swift-log): recovery at
        /// open, damage found, compactions, writes refused by ``maximumNumberOfActiveVersions``,
        /// slow commits. Nil (the default): nothing is logged. The store's numbers go to the
        /// process's swift-metrics backend, when one is bootstrapped. The first Realm to open a
        /// file in the process decides both for every Realm on that file.
        ///
        /// ```swift
        /// var config = Realm.Configuration(fileURL: url)
        /// config.logger = Logger(label: "app.realm")
        /// ```
        public var logger: Logger?
        /// The sync client attached by `RealmSwiftSync` (``syncAttachment``).
        var _syncAttachment: (any RealmSyncAttachment)?

        /// A configuration with the given settings; every parameter has RealmSwift's default.
        public init(
            fileURL: URL? = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent("default.realm"),
            inMemoryIdentifier: String? = nil, readOnly: Bool = false, schemaVersion: UInt64 = 0,
            migrationBlock: MigrationBlock? = nil, deleteRealmIfMigrationNeeded: Bool = false,
            shouldCompactOnLaunch: (@Sendable (Int, Int) -> Bool)? = nil, objectTypes: [ObjectBase.Type]? = nil,
            maximumNumberOfActiveVersions: UInt? = nil
        ) {
            self.fileURL = fileURL
            self.readOnly = readOnly
            self.schemaVersion = schemaVersion
            self.migrationBlock = migrationBlock
            self.deleteRealmIfMigrationNeeded = deleteRealmIfMigrationNeeded
            self.shouldCompactOnLaunch = shouldCompactOnLaunch
            self.objectTypes = objectTypes
            self.maximumNumberOfActiveVersions = maximumNumberOfActiveVersions
            if let inMemoryIdentifier { self.inMemoryIdentifier = inMemoryIdentifier }
        }

        /// The path of the data file this configuration opens.
        var path: String {
            if let id = _inMemoryIdentifier { return InMemoryFiles.path(for: id) }
            if let url = fileURL { return url.path }
            return FileManager.default.currentDirectoryPath + "/default.realm"
        }
    }
}

extension Realm {
    /// When a file compacts itself while open (``Configuration/compactionPolicy``).
    public typealias CompactionPolicy = RealmStorage.CompactionPolicy
    /// A file's committed size, live bytes and dead bytes, as a ``CompactionPolicy`` sees them.
    public typealias SpaceUsage = RealmStorage.SpaceUsage
}

/// Temporary files that back in-memory Realms, removed when the last Realm using one closes.
enum InMemoryFiles {
    static func path(for identifier: String) -> String {
        let safe = identifier.map { $0.isLetter || $0.isNumber ? String($0) : "_" }.joined()
        let dir = FileManager.default.temporaryDirectory.path
        return "\(dir)/realm-memory-\(ProcessInfo.processInfo.processIdentifier)-\(safe)-\(abs(identifier.hashValue)).realm"
    }
}
