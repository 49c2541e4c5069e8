import Foundation
@_exported import RealmTestSupport
import Testing

@testable import RealmStorage

/// Creates a store with a `Person` table like the benchmark's.
func makePeopleStore(_ dir: TempDir, count: Int = 0, options: Store.Options = .init(create: true)) throws -> Store {
    let store = try Store.open(at: dir.file(), options: options)
    let tx = try store.beginWrite()
    try tx.createTable("Person", primaryKey: ColumnSchema("id", .int))
    try tx.addColumn("Person", ColumnSchema("name", .string))
    try tx.addColumn("Person", ColumnSchema("age", .int))
    try tx.addColumn("Person", ColumnSchema("score", .double))
    try tx.addColumn("Person", ColumnSchema("active", .bool))
    for i in 0..<count {
        try tx.insert("Person", row: person(i))
    }
    try tx.commit()
    return store
}

func person(_ i: Int) -> [StorageValue] {
    [.int(Int64(i)), .string("name-\(i % 10000)"), .int(Int64((i * 7) % 100)), .double(Double(i % 1000) / 10), .bool(i % 3 == 0)]
}

/// Whether `condition` holds within `seconds` (looked at every half millisecond).
func waitUntil(_ seconds: Double, _ condition: () -> Bool) -> Bool {
    let end = Date().addingTimeInterval(seconds)
    while Date() < end {
        if condition() { return true }
        usleep(500)
    }
    return condition()
}

func fileBytes(_ path: String) -> [UInt8] { Array(FileManager.default.contents(atPath: path) ?? Data()) }

/// Runs `body` and checks that it throws a `StorageError` with `code`; returns the error thrown.
@discardableResult
func expectCode<T>(_ code: StorageError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> T) -> StorageError? {
    do {
        _ = try body()
        Issue.record("expected StorageError.\(code), got success", sourceLocation: sourceLocation)
    } catch let e as StorageError {
        #expect(e.code == code, "\(e)", sourceLocation: sourceLocation)
        return e
    } catch {
        Issue.record("expected StorageError.\(code), got \(error)", sourceLocation: sourceLocation)
    }
    return nil
}

extension Store {
    /// Runs `body` in a write transaction and commits it; the transaction (which retains the store)
    /// ends before this returns.
    @discardableResult
    func write<T>(_ body: (WriteTransaction) throws -> T) throws -> T {
        let tx = try beginWrite()
        let result = try body(tx)
        try tx.commit()
        return result
    }
}

/// Starts the StorageCrashWriter child in `mode` ("hold", "holdwrite") on `file` and returns it with
/// the first line it printed (once it printed it, it holds what it says).
func startHoldingWriter(_ binary: String, _ file: String, _ mode: String) throws -> (process: Process, line: String) {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: binary)
    p.arguments = [file, mode]
    let out = Pipe()
    p.standardOutput = out
    try p.run()
    var line = ""
    while !line.contains("\n") {
        let d = out.fileHandleForReading.availableData
        if d.isEmpty { break }
        line += String(decoding: d, as: UTF8.self)
    }
    return (p, line)
}

/// Checks a file whose newest version holds patches (format 5, Spec/FORMAT.md §4.8, §5.7): its live
/// bytes equal the header's and the live blocks' (a patch counted with its base), it verifies clean,
/// and a compacted copy reads the same by `check`, holds no block of `patchKind` and verifies clean.
func expectPatchedFileHolds(_ store: Store, _ dir: TempDir, patchKind: String, _ check: (Snapshot) throws -> Void) throws {
    let fresh = try Store.open(at: dir.file(), options: .init(readOnly: true)).snapshot()
    try check(fresh)
    #expect(Verifier().verify(fresh).isClean)
    let live = try Inspector().inspect(path: dir.file(), blocks: true).blocks.filter(\.isLive)
    #expect(live.contains { $0.kind == patchKind })
    let blocks = live.filter { $0.kind != "header" }.reduce(0) { $0 + Int($1.length) }
    #expect(Int(fresh.liveBytes) == FileHeader.size + blocks)
    let copy = dir.file("copy.realm")
    _ = try store.compact(to: copy)
    let compacted = try Store.open(at: copy, options: .init(readOnly: true)).snapshot()
    try check(compacted)
    #expect(try !Inspector().inspect(path: copy, blocks: true).blocks.contains { $0.isLive && $0.kind == patchKind })
    #expect(Verifier().verify(compacted).isClean)
}

extension Snapshot {
    /// Calls `body` with each row group's keys and the requested columns' segments (nil where a
    /// group predates a column): what the concurrency tests sum while writers commit.
    func forEachRowGroup(_ table: String, columns: [String], _ body: (SegmentReader, [SegmentReader?]) throws -> Void) throws {
        let (t, st) = try self.table(table)
        let cols = try columns.map { n in
            guard let c = t.column(n) else { throw StorageError(.notFound, "table '\(table)' has no column '\(n)'") }
            return c
        }
        for e in try rowGroups(st) {
            let g = try rowGroup(e.block)
            try body(try keySegment(g), try cols.map { try columnSegment(g, $0) })
        }
    }
}
