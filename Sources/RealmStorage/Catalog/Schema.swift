/// A column of a table as stored in the catalog (Spec/FORMAT.md §5.2).
public struct ColumnSchema: Sendable, Hashable {
    /// Stable identifier within its table; never reused after removal.
    public internal(set) var id: UInt32
    /// The column's name (the property's name).
    public var name: String
    /// The type of its values (of its elements, for a list, set or map).
    public var type: ColumnType
    /// Whether a value (element, map value) may be null.
    public var isNullable: Bool
    /// Whether each value is a list of elements of ``type`` (a set column is a list column too).
    public var isList: Bool
    /// Whether the column's lists are sets: no two elements are equal (floats by bit pattern,
    /// strings by UTF-8 bytes). Implies ``isList``. Format version 2.
    public var isSet: Bool
    /// Whether each value is a map from strings to values of ``type`` (null too when nullable).
    /// A map column is neither a list nor a set. Format version 2.
    public var isMap: Bool
    /// For `.link` columns: the name of the target table.
    public var linkTarget: String?
    /// Whether a persisted index is kept for this column.
    public var isIndexed: Bool

    /// Describes a column to add; `id` is assigned by the catalog. `set: true` implies `list: true`;
    /// `map: true` describes a map column, which cannot also be a list.
    public init(
        _ name: String, _ type: ColumnType, nullable: Bool = false, list: Bool = false, set: Bool = false, map: Bool = false,
        linkTarget: String? = nil, indexed: Bool = false
    ) {
        self.id = 0
        self.name = name
        self.type = type
        self.isNullable = nullable
        self.isList = list || set
        self.isSet = set
        self.isMap = map
        self.linkTarget = linkTarget
        self.isIndexed = indexed
    }

    /// The format-version-2 feature this column uses ("mixed", "a set" or "a map"), or nil when a
    /// version-1 file can hold it (Spec/FORMAT.md §3.1, §5.2).
    var formatVersion2Feature: String? {
        if type == .mixed { return "mixed" }
        if isSet { return "a set" }
        if isMap { return "a map" }
        return nil
    }

    /// The value of this column in an object that has not set it (Spec/FORMAT.md §5.5).
    package var defaultValue: StorageValue {
        ColumnBuffer.defaultValue(type: type, nullable: isNullable, isList: isList, isMap: isMap)
    }
}

/// A table as stored in the catalog.
public struct TableSchema: Sendable, Hashable {
    /// Stable identifier; never reused after removal.
    public internal(set) var id: UInt32
    /// The table's name (the class name).
    public var name: String
    /// Its columns, in the order they were added.
    public internal(set) var columns: [ColumnSchema]
    /// The name of the primary-key column, if any.
    public internal(set) var primaryKey: String?
    var nextColumnId: UInt32

    init(id: UInt32, name: String) {
        self.id = id
        self.name = name
        self.columns = []
        self.primaryKey = nil
        self.nextColumnId = 1
    }

    /// The column named `name`.
    public func column(_ name: String) -> ColumnSchema? { columns.first { $0.name == name } }
    func column(id: UInt32) -> ColumnSchema? { columns.first { $0.id == id } }
    /// The primary-key column.
    public var primaryKeyColumn: ColumnSchema? { primaryKey.flatMap(column) }
}

/// The schema stored in the file: every table and column, so tools need no Swift model classes.
public struct Catalog: Sendable, Hashable {
    /// Every table, in the order they were created.
    public internal(set) var tables: [TableSchema] = []
    var nextTableId: UInt32 = 1

    /// An empty catalog.
    public init() {}

    /// A catalog of one table that exists in memory only (no file): how the query engine names the
    /// values of a list of primitives as a column.
    package static func standalone(table name: String, columns: [ColumnSchema]) -> Catalog {
        var t = TableSchema(id: 1, name: name)
        for c in columns {
            var column = c
            column.id = t.nextColumnId
            t.nextColumnId += 1
            t.columns.append(column)
        }
        var catalog = Catalog()
        catalog.tables = [t]
        catalog.nextTableId = 2
        return catalog
    }

    /// The table named `name`, if there is one.
    public func table(_ name: String) -> TableSchema? { tables.first { $0.name == name } }
    func table(id: UInt32) -> TableSchema? { tables.first { $0.id == id } }

    // MARK: Encoding (Spec/FORMAT.md §5.2)

    func encode(into w: inout ByteWriter) {
        w.u32(nextTableId)
        w.u32(UInt32(tables.count))
        for t in tables {
            w.u32(t.id)
            w.string(t.name)
            w.u32(t.nextColumnId)
            w.u32(t.primaryKeyColumn?.id ?? 0)
            w.u32(UInt32(t.columns.count))
            for c in t.columns {
                w.u32(c.id)
                w.string(c.name)
                w.u8(c.type.rawValue)
                w.u8((c.isNullable ? 1 : 0) | (c.isList ? 2 : 0) | (c.isIndexed ? 4 : 0) | (c.isSet ? 8 : 0) | (c.isMap ? 16 : 0))
                w.u32(c.linkTarget.flatMap { table($0)?.id } ?? 0)
            }
        }
    }

    /// Decodes and validates a catalog of a file whose static header says `formatVersion`.
    static func decode(_ r: inout BlockReader, formatVersion: UInt32) throws -> Catalog {
        var cat = Catalog()
        cat.nextTableId = try r.u32()
        let n = try r.count(max: 1 << 16, "table count")
        var linkTargets: [(Int, Int, UInt32)] = []
        for ti in 0..<n {
            var t = TableSchema(id: try r.u32(), name: try r.string())
            t.nextColumnId = try r.u32()
            let pkId = try r.u32()
            let nc = try r.count(max: 1 << 16, "column count")
            for _ in 0..<nc {
                let id = try r.u32()
                let name = try r.string()
                let rawType = try r.u8()
                guard let type = ColumnType(rawValue: rawType) else { throw r.corrupted("unknown column type \(rawType)") }
                let flags = try r.u8()
                guard flags & ~31 == 0 else { throw r.corrupted("unknown column flags \(flags)") }
                let target = try r.u32()
                guard flags & 8 == 0 || flags & 2 != 0 else { throw r.corrupted("set column '\(name)' is not a list") }
                guard flags & 16 == 0 || flags & (2 | 4) == 0, flags & 16 == 0 || pkId == 0 || id != pkId else {
                    throw r.corrupted("map column '\(name)' is also a list, indexed or the primary key")
                }
                var c = ColumnSchema(
                    name, type, nullable: flags & 1 != 0, list: flags & 2 != 0, set: flags & 8 != 0, map: flags & 16 != 0,
                    indexed: flags & 4 != 0)
                c.id = id
                if let feature = c.formatVersion2Feature, formatVersion < 2 {
                    throw r.corrupted("column '\(name)' is \(feature), which a format version \(formatVersion) file cannot hold")
                }
                if type == .mixed && (!c.isNullable || c.isIndexed || (pkId != 0 && id == pkId)) {
                    throw r.corrupted("mixed column '\(name)' must be nullable, not indexed and not the primary key")
                }
                if type == .link { linkTargets.append((ti, t.columns.count, target)) }
                t.columns.append(c)
                if id == pkId { t.primaryKey = name }
            }
            if pkId != 0 && t.primaryKey == nil { throw r.corrupted("primary key column \(pkId) of '\(t.name)' does not exist") }
            guard Set(t.columns.map(\.id)).count == t.columns.count, Set(t.columns.map(\.name)).count == t.columns.count,
                t.columns.allSatisfy({ $0.id >= 1 && $0.id < t.nextColumnId })
            else { throw r.corrupted("table '\(t.name)' has duplicate or out-of-range columns") }
            cat.tables.append(t)
        }
        guard Set(cat.tables.map(\.id)).count == n, Set(cat.tables.map(\.name)).count == n,
            cat.tables.allSatisfy({ $0.id >= 1 && $0.id < cat.nextTableId })
        else { throw r.corrupted("the catalog has duplicate or out-of-range tables") }
        for (ti, ci, target) in linkTargets {
            guard let tt = cat.table(id: target) else { throw r.corrupted("link column targets missing table \(target)") }
            cat.tables[ti].columns[ci].linkTarget = tt.name
        }
        return cat
    }
}
