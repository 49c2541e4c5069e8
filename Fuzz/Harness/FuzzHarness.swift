import Foundation
import RealmQuery
import RealmStorage

/// The fuzz targets' bodies, compiled into the root package so that `swift test` replays every
/// corpus file (Fuzz/Corpus/<Target>/) without libFuzzer: whatever the bytes, these functions must
/// return (errors are fine; a trap or a hang is a bug). Public because the libFuzzer executables of
/// the nested package Fuzz/Package.swift are another package.
public enum FuzzHarness {
    /// The bytes libFuzzer hands to `LLVMFuzzerTestOneInput`, copied (the pointer code stays in
    /// RealmStorage/Memory).
    public static func input(_ data: OpaquePointer?, _ size: Int) -> [UInt8] { ForeignBytes.copy(data, count: size) }

    /// `FileOpen`: bytes that begin like a Realm file are the file; other bytes are a mutation
    /// program for a valid file whose checksums are repaired after the damage (``PristineFile``).
    /// Then: open it read-only, verify it, inspect it and read every object of every table.
    public static func fileOpen(_ data: [UInt8]) {
        if data.starts(with: FileHeader.magic) || PristineFile.shared == nil {
            readFile(data)
        } else {
            readFile(PristineFile.shared!.mutated(by: data))
        }
    }

    static func readFile(_ data: [UInt8]) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("realm-fuzz-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("input.realm").path
        guard FileManager.default.createFile(atPath: path, contents: Data(data)) else { return }
        _ = try? Verifier().verify(path: path)
        _ = try? Inspector().readHeader(path: path)
        _ = try? Inspector().inspect(path: path, segments: true, blocks: true)
        guard let store = try? Store.open(at: path, options: .passive), let snapshot = try? store.snapshot() else { return }
        _ = Verifier().verify(snapshot)
        for table in snapshot.catalog.tables {
            guard let keys = try? snapshot.objectKeys(table.name) else { continue }
            for key in keys.prefix(10_000) { _ = try? snapshot.object(table.name, key) }
            _ = try? QueryEvaluator(snapshot).filter(table.name, .constant(true))
        }
    }

    /// `Predicate`: the bytes as query text — parse it and bind it against a fixed schema.
    public static func predicate(_ data: [UInt8]) {
        guard let text = String(validating: data, as: UTF8.self), let (catalog, table) = fixedSchema else { return }
        let arguments: [QueryArgument] = [.value(.int(1)), .value(.string("a"))]
        _ = try? BoundPredicate.compile(text, arguments: arguments, table: table, catalog: catalog)
        // The same text as a query on values (`self`, as `filter` on a list of primitives), bound
        // and evaluated over small lists of several types.
        for (values, type) in valueLists {
            _ = try? StoredValues.matchingIndices(values, type: type, isNullable: true, predicate: text, arguments: arguments)
        }
    }

    static let valueLists: [([StorageValue], ColumnType)] = [
        ([.int(1), .null, .int(-5), .int(.max)], .int), ([.string("a"), .string(""), .null, .string("É")], .string),
        ([.double(.nan), .double(2), .double(-0.0)], .double), ([.bool(true), .null], .bool),
        ([.timestamp(seconds: 1, nanoseconds: 0), .null], .timestamp), ([.int(3), .string("x"), .null, .double(1.5)], .mixed),
    ]

    /// A `Person`/`Dog` schema with every column kind, built once in a temporary store.
    static let fixedSchema: (Catalog, TableSchema)? = {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("realm-fuzz-schema-\(UUID().uuidString).realm").path
        defer { for p in [path, path + ".lock"] { try? FileManager.default.removeItem(atPath: p) } }
        guard let store = try? Store.open(at: path, options: .init(create: true)), let tx = try? store.beginWrite() else { return nil }
        do {
            try tx.createTable("Dog")
            try tx.addColumn("Dog", ColumnSchema("name", .string))
            try tx.addColumn("Dog", ColumnSchema("age", .int, nullable: true))
            try tx.createTable("Person", primaryKey: ColumnSchema("id", .int))
            for c in [
                ColumnSchema("name", .string), ColumnSchema("age", .int), ColumnSchema("score", .double, nullable: true),
                ColumnSchema("active", .bool), ColumnSchema("born", .timestamp), ColumnSchema("data", .binary),
                ColumnSchema("dog", .link, linkTarget: "Dog"), ColumnSchema("dogs", .link, list: true, linkTarget: "Dog"),
                ColumnSchema("tags", .string, set: true), ColumnSchema("scores", .int, map: true),
                ColumnSchema("any", .mixed, nullable: true),
            ] {
                try tx.addColumn("Person", c)
            }
            let catalog = tx.catalog
            tx.cancel()
            return catalog.table("Person").map { (catalog, $0) }
        } catch {
            return nil
        }
    }()
}

/// Stops with `message` when `condition` is false — in optimized builds too, where a failed
/// `precondition` traps without its message and a fuzzer's finding would not say what failed.
func require(_ condition: Bool, _ message: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line) {
    if !condition { fatalError(message(), file: file, line: line) }
}
