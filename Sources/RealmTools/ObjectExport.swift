import Foundation
import RealmStorage

/// Objects of a table as JSON Lines (`--objects`) and every table as CSV or JSON Lines files
/// (`--export`), streamed one row group at a time so memory stays bounded by a row group.
package enum ObjectExport {
    /// The export formats.
    package enum Format: String, Sendable, CaseIterable {
        case csv
        case jsonl
        /// One Parquet file per table (``ParquetExport``).
        case parquet

        /// The file name extension.
        package var fileExtension: String { rawValue }
    }

    /// Calls `body` with each object's key and its values in catalog column order (defaults for
    /// row groups that predate a column); `body` returns false to stop. Segments are decoded for
    /// one row group at a time and not cached, and the file's pages are let go every few groups,
    /// so a table of any size streams in bounded memory.
    package static func forEachObject(
        _ s: Snapshot, _ table: TableSchema, _ body: (ObjectKey, [StorageValue]) throws -> Bool
    ) throws {
        let columns = table.columns
        for (gi, entry) in try s.rowGroups(try s.tableState(table.name)).enumerated() {
            if gi % 16 == 15 { s.releaseResidentPages() }
            let group = try s.rowGroup(entry.block)
            let keys = try s.keySegment(group)
            let segments = try columns.map { try s.columnSegment(group, $0, cached: false) }
            for row in 0..<keys.rowCount {
                guard case .int(let k) = try keys.value(row) else {
                    throw StorageError(.corrupted, "object key is not an integer", offset: group.keys.offset)
                }
                var values: [StorageValue] = []
                values.reserveCapacity(columns.count)
                for (c, seg) in zip(columns, segments) { values.append(try seg?.value(row) ?? c.defaultValue) }
                if try !body(ObjectKey(k), values) { return }
            }
        }
    }

    /// One object as a JSON object: `_key` first, then the columns in catalog order.
    package static func json(_ key: ObjectKey, _ values: [StorageValue], _ table: TableSchema, _ text: ValueText) -> JSONValue {
        .object([("_key", .int(key.rawValue))] + zip(table.columns, values).map { ($0.name, text.json($1)) })
    }

    /// Writes the objects of `table` that match `filter` (all without one) as JSON Lines through
    /// `emit`, at most `limit` of them; returns how many were written.
    @discardableResult
    package static func writeObjects(
        _ s: Snapshot, table: TableSchema, filter: ObjectFilter?, limit: Int?, emit: (String) throws -> Void
    ) throws -> Int {
        let text = ValueText(catalog: s.catalog)
        var written = 0
        if limit == 0 { return 0 }
        try forEachObject(s, table) { key, values in
            if let filter {
                let row = Dictionary(zip(table.columns.map(\.name), values), uniquingKeysWith: { a, _ in a })
                guard try filter.matches(s, key, row) else { return true }
            }
            try emit(json(key, values, table, text).compact + "\n")
            written += 1
            return limit.map { written < $0 } ?? true
        }
        return written
    }

    /// What was written for one table.
    package struct ExportedTable: Sendable, Equatable {
        package var table: String
        package var objects: Int
        package var file: String
    }

    /// A file name for a table: characters other than letters, digits, `-`, `_` and `.` become `_`.
    package static func fileName(_ table: String, _ format: Format) -> String {
        let safe = String(
            table.unicodeScalars.map { u -> Character in
                u.properties.isAlphabetic || ("0"..."9").contains(u) || u == "-" || u == "_" || u == "." ? Character(u) : "_"
            })
        return (safe.isEmpty || safe.hasPrefix(".") ? "_" + safe : safe) + "." + format.fileExtension
    }

    /// Writes every table of `s` to `directory` (created if missing) as `<Table>.csv` (a header
    /// row `_key,column,…`, then one RFC 4180 record per object), `<Table>.jsonl` or
    /// `<Table>.parquet` (``ParquetExport``).
    package static func export(_ s: Snapshot, format: Format, to directory: String) throws -> [ExportedTable] {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw ToolFailure(.failure, "cannot create \(directory): \(error.localizedDescription)")
        }
        let text = ValueText(catalog: s.catalog)
        var out: [ExportedTable] = []
        for t in s.catalog.tables {
            let path = (directory as NSString).appendingPathComponent(fileName(t.name, format))
            let objects =
                format == .parquet
                ? try ParquetExport.write(s, table: t, to: path) : try writeLines(s, table: t, csv: format == .csv, to: path, text)
            out.append(ExportedTable(table: t.name, objects: objects, file: path))
        }
        return out
    }

    /// Writes the objects of `table` to `path` as CSV (a header row, then one record per object)
    /// or JSON Lines; returns how many.
    static func writeLines(_ s: Snapshot, table t: TableSchema, csv: Bool, to path: String, _ text: ValueText) throws -> Int {
        let file = try LineWriter(path: path)
        var n = 0
        if csv { try file.write(CSV.record(["_key"] + t.columns.map(\.name))) }
        try forEachObject(s, t) { key, values in
            if csv {
                try file.write(
                    CSV.record(["\(key.rawValue)"] + zip(t.columns, values).map { c, v in v.isNull ? nil : text.csvField(v, c) }))
            } else {
                try file.write(json(key, values, t, text).compact + "\n")
            }
            n += 1
            return true
        }
        try file.close()
        return n
    }
}

/// Appends text to a new file through a 1 MiB buffer. Not thread-safe.
package final class LineWriter {
    let handle: FileHandle
    let path: String
    var buffer = Data()

    /// Creates (or truncates) the file at `path`.
    package init(path: String) throws {
        guard FileManager.default.createFile(atPath: path, contents: nil),
            let h = FileHandle(forWritingAtPath: path)
        else { throw ToolFailure(.failure, "cannot write \(path)") }
        self.handle = h
        self.path = path
    }

    package func write(_ s: String) throws {
        buffer.append(contentsOf: s.utf8)
        if buffer.count >= 1 << 20 { try flush() }
    }

    /// Appends bytes.
    package func write(bytes: [UInt8]) throws {
        buffer.append(contentsOf: bytes)
        if buffer.count >= 1 << 20 { try flush() }
    }

    func flush() throws {
        guard !buffer.isEmpty else { return }
        do { try handle.write(contentsOf: buffer) } catch {
            throw ToolFailure(.failure, "cannot write \(path): \(error.localizedDescription)")
        }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Flushes and closes the file.
    package func close() throws {
        try flush()
        try handle.close()
    }
}
