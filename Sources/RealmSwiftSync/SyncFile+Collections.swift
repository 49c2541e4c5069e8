import Foundation
import RealmQuery
import RealmStorage
import RealmSwift
import RealmSyncProtocol

/// The element identities of a client file's synced lists (Spec/SYNC.md §6.4, §7.1), kept in the
/// file's table `__sync_lists`: one row per list property of an object, its identities in list
/// order and the values they hold. Written in the same transaction as the list it describes (a
/// local commit, a download). The values make the row the base of the next change's difference
/// even when the list changed without a write of its own (a linked object deleted: Realm removes
/// it from lists), so that change is uploaded as the element's erase.
final class ListIdentities {
    static let table = "__sync_lists"
    private let tx: WriteTransaction

    /// The identities as `tx` holds them.
    init(_ tx: WriteTransaction) { self.tx = tx }

    static func rowKey(_ className: String, _ primaryKey: SyncValue, _ property: String) -> String {
        var w = WireWriter()
        w.value(primaryKey)
        return className + "\u{1}" + property + "\u{1}" + Hex.string(w.bytes)
    }

    /// A list as last described or downloaded: its elements' identities and values.
    struct Known {
        var ids: [ElementId]
        var values: [SyncValue]
        static let empty = Known(ids: [], values: [])
    }

    /// The list `property` of the object `primaryKey` of `className` as the file last knew it;
    /// nil when the file has no row for it.
    func known(_ className: String, _ primaryKey: SyncValue, _ property: String) throws -> Known? {
        guard tx.catalog.table(Self.table) != nil,
            let key = try tx.objectKey(Self.table, primaryKey: .string(Self.rowKey(className, primaryKey, property))),
            case .binary(let bytes) = try tx.value(Self.table, key, "ids")
        else { return nil }
        do {
            var r = WireReader(bytes)
            let ids = try (0..<(try r.count(minimumItemSize: 10))).map { _ throws(WireError) in try r.elementId() }
            guard case .list(let values) = try r.value(), values.count == ids.count else {
                throw WireError(offset: 0, "values that do not match the identities")
            }
            return Known(ids: ids, values: values)
        } catch {
            throw SyncError(.clientInternalError, "the file's list identities are damaged: \(error)")
        }
    }

    /// Records `list` as the list `property` of the object.
    func set(_ className: String, _ primaryKey: SyncValue, _ property: String, _ list: Known) throws {
        if tx.catalog.table(Self.table) == nil {
            try tx.createTable(Self.table, primaryKey: ColumnSchema("key", .string))
            try tx.addColumn(Self.table, ColumnSchema("ids", .binary))
        }
        var w = WireWriter()
        w.count(list.ids.count)
        for id in list.ids { w.elementId(id) }
        w.value(.list(list.values))
        let rowKey = Self.rowKey(className, primaryKey, property)
        if let key = try tx.objectKey(Self.table, primaryKey: .string(rowKey)) {
            try tx.set(Self.table, key, "ids", .binary(w.bytes))
        } else {
            try tx.insert(Self.table, ["key": .string(rowKey), "ids": .binary(w.bytes)])
        }
    }

    /// Forgets the identities of the lists of a deleted object.
    func remove(_ className: String, _ primaryKey: SyncValue, table: TableSchema) throws {
        guard tx.catalog.table(Self.table) != nil else { return }
        for c in table.columns where c.isList && !c.isSet {
            if let key = try tx.objectKey(Self.table, primaryKey: .string(Self.rowKey(className, primaryKey, c.name))) {
                try tx.delete(Self.table, key)
            }
        }
    }
}

extension SyncFile {
    // MARK: Collections, from commits to uploads

    /// Makes the identities of the elements one upload inserts (§5: the upload's clock, the
    /// client's element origin, and a count of its inserts).
    struct ElementIdMaker {
        let clock: UInt64
        let origin: [UInt8]
        var index: UInt64 = 0

        mutating func next() -> ElementId {
            defer { index += 1 }
            return ElementId(clock: clock, clientFileId: origin, index: index)
        }
    }

    /// The instructions that make a new object's collection `column` hold `value`.
    static func describeNew(
        _ value: StorageValue, column: ColumnSchema, object id: SyncValue, className: String, at source: any QuerySource,
        ids maker: inout ElementIdMaker, lists: ListIdentities
    ) throws -> [Instruction] {
        try describeChange(
            from: column.isMap ? .map([:]) : .list([]), known: .empty, to: value, column: column, object: id, className: className,
            at: source, oldAt: nil, ids: &maker, lists: lists)
    }

    /// The instructions that change collection `column` of the object `id` from `old` to `new`
    /// (§5): a set's added and erased elements, a map's set and erased keys, a list's erased and
    /// inserted elements (by the longest common subsequence of the values, from the list as the
    /// file last knew it, `known`, or from `old` with unknown identities when it has none), and the
    /// list's new identities recorded in `lists`.
    static func describeChange(
        from old: StorageValue, known stored: ListIdentities.Known?, to new: StorageValue, column: ColumnSchema, object id: SyncValue,
        className: String, at source: any QuerySource, oldAt oldSource: (any QuerySource)?, ids maker: inout ElementIdMaker,
        lists: ListIdentities
    ) throws -> [Instruction] {
        let path = [column.name]
        func instruction(_ op: Instruction.Operation) -> Instruction { Instruction(className, id, op) }
        // Old values are read where they were (an embedded object's old contents: in the parent).
        func elements(_ v: StorageValue, at s: any QuerySource) throws -> [SyncValue] {
            guard case .list(let items) = v else { return [] }
            return try items.map { try syncValue($0, column: column, at: s) }
        }
        if column.isMap {
            func entries(_ v: StorageValue, at s: any QuerySource) throws -> [String: SyncValue] {
                guard case .map(let m) = v else { return [:] }
                return try m.mapValues { try syncValue($0, column: column, at: s) }
            }
            let before = try entries(old, at: oldSource ?? source)
            let after = try entries(new, at: source)
            var out: [Instruction] = []
            for k in before.keys.sorted() where after[k] == nil { out.append(instruction(.mapErase(path: path, key: k))) }
            for k in after.keys.sorted() where before[k] != after[k] {
                out.append(instruction(.mapSet(path: path, key: k, value: after[k]!)))
            }
            return out
        }
        if column.isSet {
            let before = try elements(old, at: oldSource ?? source)
            let after = try elements(new, at: source)
            let beforeSet = Set(before)
            let afterSet = Set(after)
            return before.filter { !afterSet.contains($0) }.map { instruction(.setErase(path: path, value: $0)) }
                + after.filter { !beforeSet.contains($0) }.map { instruction(.setAdd(path: path, value: $0)) }
        }
        // A list.
        let before = try stored?.values ?? elements(old, at: oldSource ?? source)
        let after = try elements(new, at: source)
        let known = stored?.ids
        let kept = Self.commonSubsequence(before, after)
        var out: [Instruction] = []
        if let known {
            var keptOld = Set<Int>()
            for (i, _) in kept { keptOld.insert(i) }
            for i in before.indices where !keptOld.contains(i) { out.append(instruction(.listErase(path: path, id: known[i]))) }
        }
        // Each new element hangs after the element before it in the new list.
        var keptAt: [Int: Int] = [:]
        for (i, j) in kept { keptAt[j] = i }
        var newIds: [ElementId] = []
        newIds.reserveCapacity(after.count)
        var previous = ElementId.head
        for (j, v) in after.enumerated() {
            if let i = keptAt[j], let known {
                previous = known[i]
            } else {
                let e = maker.next()
                out.append(instruction(.listInsert(path: path, id: e, after: previous, value: v)))
                previous = e
            }
            newIds.append(previous)
        }
        try lists.set(className, id, column.name, ListIdentities.Known(ids: newIds, values: after))
        return out
    }

    /// The pairs `(i, j)` of a longest common subsequence of `a` and `b` (`a[i] == b[j]`),
    /// ascending. A common prefix and suffix are matched first; when what is left between them is
    /// too large to compare element by element (more than 4 million pairs), none of it is matched
    /// (the elements are erased and inserted again: correct, only larger).
    static func commonSubsequence(_ a: [SyncValue], _ b: [SyncValue]) -> [(Int, Int)] {
        var prefix = 0
        while prefix < a.count && prefix < b.count && a[prefix] == b[prefix] { prefix += 1 }
        var suffix = 0
        while suffix < a.count - prefix && suffix < b.count - prefix && a[a.count - 1 - suffix] == b[b.count - 1 - suffix] {
            suffix += 1
        }
        var out = (0..<prefix).map { ($0, $0) }
        let n = a.count - prefix - suffix
        let m = b.count - prefix - suffix
        if n > 0 && m > 0 && n * m <= 4_000_000 {
            // lengths[i][j]: the longest common subsequence of a's middle from i and b's from j.
            var lengths = [[Int32]](repeating: [Int32](repeating: 0, count: m + 1), count: n + 1)
            for i in stride(from: n - 1, through: 0, by: -1) {
                for j in stride(from: m - 1, through: 0, by: -1) {
                    lengths[i][j] =
                        a[prefix + i] == b[prefix + j] ? lengths[i + 1][j + 1] + 1 : max(lengths[i + 1][j], lengths[i][j + 1])
                }
            }
            var i = 0
            var j = 0
            while i < n && j < m {
                if a[prefix + i] == b[prefix + j] {
                    out.append((prefix + i, prefix + j))
                    i += 1
                    j += 1
                } else if lengths[i + 1][j] >= lengths[i][j + 1] {
                    i += 1
                } else {
                    j += 1
                }
            }
        }
        out += (0..<suffix).map { (a.count - suffix + $0, b.count - suffix + $0) }
        return out
    }

    // MARK: Collections, from downloads to commits

    /// The stored form of a collection's elements `values` (with their identities `ids`, for a
    /// list): elements that do not fit, and links to objects the file does not hold, are left out
    /// with their identities.
    static func storageElements(_ values: [SyncValue], ids: [ElementId], column: ColumnSchema, tx: WriteTransaction) throws -> (
        [StorageValue], ListIdentities.Known
    ) {
        var out: [StorageValue] = []
        var kept = ListIdentities.Known.empty
        for (n, v) in values.enumerated() {
            guard let s = try storageValue(v, column: column, tx: tx) else { continue }
            if column.type == .link, s.isNull, v != .null { continue }  // a link to an object the file does not hold
            out.append(s)
            if n < ids.count {
                kept.ids.append(ids[n])
                kept.values.append(v)
            }
        }
        return (out, kept)
    }

    /// Replaces collection `column` of object `key` with the store's state (a download's `SET`
    /// of a set or map, or its `LIST_STATE`).
    static func replaceCollection(
        _ op: Instruction.Operation, of i: Instruction, key: ObjectKey, column: ColumnSchema, tx: WriteTransaction
    ) throws {
        // Unchanged contents are not written again (observers would see a change), but a list's
        // identities are recorded.
        let current = try tx.value(i.className, key, column.name)
        let incoming: SyncValue? =
            switch op {
            case .set(_, let v): v
            case .listState(_, _, let values): .list(values)
            default: nil
            }
        if try wholeSyncValue(current, column: column, at: tx) == incoming {
            if case .listState(_, let ids, let values) = op {
                try ListIdentities(tx).set(i.className, i.primaryKey, column.name, ListIdentities.Known(ids: ids, values: values))
            }
            return
        }
        if holdsEmbedded(column, in: tx.catalog), let target = tx.catalog.table(column.linkTarget!) {
            for k in Realm.linkKeys(current) where try tx.contains(target.name, k) { try deleteCascading(target, k, tx: tx) }
        }
        switch op {
        case .set(_, .set(let items)) where column.isSet:
            let (values, _) = try storageElements(items, ids: [], column: column, tx: tx)
            try tx.set(i.className, key, column.name, .list(values))
        case .set(_, .map(let entries)) where column.isMap:
            var map: [String: StorageValue] = [:]
            for e in entries {
                guard let v = try storageValue(e.value, column: column, tx: tx) else { continue }
                map[e.key] = v
            }
            try tx.set(i.className, key, column.name, .map(map))
        case .listState(_, let ids, let items) where column.isList && !column.isSet:
            let (values, kept) = try storageElements(items, ids: ids, column: column, tx: tx)
            try tx.set(i.className, key, column.name, .list(values))
            try ListIdentities(tx).set(i.className, i.primaryKey, column.name, kept)
        default:
            return  // a state that does not fit the column: left out, as a scalar that does not fit
        }
    }

    // MARK: Mixed values

    /// The wire form of a mixed column's stored value `v` (§4.3: tag 17; null stays null).
    static func mixedSyncValue(_ v: StorageValue, at source: any QuerySource) throws -> SyncValue {
        switch v {
        case .null: return .null
        case .typedLink(let tableId, let key):
            guard let target = source.catalog.tables.first(where: { $0.id == tableId }), let pkColumn = target.primaryKeyColumn,
                try source.contains(target.name, key)
            else { return .null }
            let pk = try syncValue(try source.value(target.name, key, pkColumn.name), column: pkColumn, at: source)
            return .mixed(.link(class: target.name, primaryKey: pk))
        default:
            let scalarType: ColumnType? =
                switch v {
                case .int: .int
                case .bool: .bool
                case .float: .float
                case .double: .double
                case .string: .string
                case .binary: .binary
                case .timestamp: .timestamp
                case .objectId: .objectId
                case .uuid: .uuid
                case .decimal128: .decimal128
                default: nil
                }
            guard let scalarType else { throw SyncError(.clientInternalError, "a mixed value of a kind that cannot be synced: \(v)") }
            return .mixed(try syncValue(v, column: ColumnSchema("value", scalarType), at: source))
        }
    }

    /// The stored form of a mixed value `inner` (the payload of tag 17); nil when it does not fit.
    static func mixedStorageValue(_ inner: SyncValue, tx: WriteTransaction) throws -> StorageValue? {
        switch inner {
        case .null: return .null
        case .link(let cls, let pk):
            guard let target = tx.catalog.table(cls), let pkColumn = target.primaryKeyColumn,
                let key = try storageValue(pk, column: pkColumn, tx: tx), let object = try tx.objectKey(cls, primaryKey: key)
            else { return .null }
            return .typedLink(table: target.id, key: object)
        case .bool: return try storageValue(inner, column: ColumnSchema("value", .bool), tx: tx)
        case .int: return try storageValue(inner, column: ColumnSchema("value", .int), tx: tx)
        case .float: return try storageValue(inner, column: ColumnSchema("value", .float), tx: tx)
        case .double: return try storageValue(inner, column: ColumnSchema("value", .double), tx: tx)
        case .string: return try storageValue(inner, column: ColumnSchema("value", .string), tx: tx)
        case .binary: return try storageValue(inner, column: ColumnSchema("value", .binary), tx: tx)
        case .timestamp: return try storageValue(inner, column: ColumnSchema("value", .timestamp), tx: tx)
        case .objectId: return try storageValue(inner, column: ColumnSchema("value", .objectId), tx: tx)
        case .uuid: return try storageValue(inner, column: ColumnSchema("value", .uuid), tx: tx)
        case .decimal128: return try storageValue(inner, column: ColumnSchema("value", .decimal128), tx: tx)
        default: return nil
        }
    }
}
