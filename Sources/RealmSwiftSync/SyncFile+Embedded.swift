import Foundation
import RealmQuery
import RealmStorage
import RealmSwift
import RealmSyncProtocol

/// Embedded objects (Spec/SYNC.md §6.6). In the file an embedded object is a row of its class's
/// table, linked from its owner; on the wire it is a value of its owner's property
/// (`.embedded([PropertyState])`, collections inside it whole), and a change of one of its
/// properties is a `SET` by path (`[property, inner property, …]`) on the top-level owner.
extension SyncFile {
    /// Whether `column` holds embedded objects: it links to a class without a primary key (a
    /// synced top-level class always has one, `_id`).
    static func holdsEmbedded(_ column: ColumnSchema, in catalog: Catalog) -> Bool {
        column.type == .link && column.linkTarget.flatMap { catalog.table($0) }.map { $0.primaryKeyColumn == nil } == true
    }

    /// The wire form of the embedded object `key` of `table`: every property, collections whole.
    static func embeddedSyncValue(_ table: TableSchema, _ key: ObjectKey, at source: any QuerySource, depth: Int = 0) throws -> SyncValue {
        guard depth < 32 else { throw SyncError(.clientInternalError, "embedded objects nested more than 32 deep") }
        var states: [PropertyState] = []
        for c in table.columns {
            states.append(PropertyState(c.name, try wholeSyncValue(try source.value(table.name, key, c.name), column: c, at: source)))
        }
        return .embedded(states)
    }

    /// A property's value whole: a scalar's value, or a collection's contents (a list, set or map
    /// value).
    static func wholeSyncValue(_ v: StorageValue, column: ColumnSchema, at source: any QuerySource) throws -> SyncValue {
        switch v {
        case .list(let items) where column.isList:
            let values = try items.map { try syncValue($0, column: column, at: source) }
            return column.isSet ? .set(values) : .list(values)
        case .map(let m) where column.isMap:
            return .map(try m.keys.sorted().map { SyncValue.MapEntry($0, try syncValue(m[$0]!, column: column, at: source)) })
        default:
            return try syncValue(v, column: column, at: source)
        }
    }

    // MARK: From downloads to commits

    /// A new embedded object of `table` holding `states`; its key.
    static func insertEmbedded(_ states: [PropertyState], into table: TableSchema, tx: WriteTransaction) throws -> ObjectKey {
        var values: [String: StorageValue] = [:]
        for s in states {
            guard let c = table.column(s.name), let v = try wholeStorageValue(s.value, column: c, tx: tx) else { continue }
            values[c.name] = v
        }
        return try tx.insert(table.name, values)
    }

    /// The stored form of a property's whole value (a collection's contents included); nil when it
    /// does not fit. Embedded objects it holds are inserted.
    static func wholeStorageValue(_ v: SyncValue, column: ColumnSchema, tx: WriteTransaction) throws -> StorageValue? {
        switch v {
        case .list(let items) where column.isList, .set(let items) where column.isList:
            return .list(try storageElements(items, ids: [], column: column, tx: tx).0)
        case .map(let entries) where column.isMap:
            var map: [String: StorageValue] = [:]
            for e in entries { map[e.key] = try storageValue(e.value, column: column, tx: tx) }
            return .map(map.compactMapValues { $0 })
        default:
            return try storageValue(v, column: column, tx: tx)
        }
    }

    /// Deletes object `key` of `table` and the embedded objects it holds, at any depth.
    static func deleteCascading(_ table: TableSchema, _ key: ObjectKey, tx: WriteTransaction) throws {
        for c in table.columns where holdsEmbedded(c, in: tx.catalog) {
            guard let target = tx.catalog.table(c.linkTarget!) else { continue }
            for k in Realm.linkKeys(try tx.value(table.name, key, c.name)) where try tx.contains(target.name, k) {
                try deleteCascading(target, k, tx: tx)
            }
        }
        try tx.delete(table.name, key)
    }

    /// Makes the embedded property `column` of object `key` of `table` hold `value` (an embedded
    /// object's state, or null): the object it holds is updated in place (only what differs is
    /// written, so observers see what changed), or replaced when it has none.
    static func setEmbedded(_ value: SyncValue, _ table: TableSchema, _ key: ObjectKey, _ column: ColumnSchema, tx: WriteTransaction)
        throws
    {
        guard let target = tx.catalog.table(column.linkTarget ?? "") else { return }
        let current = try tx.value(table.name, key, column.name)
        if case .embedded(let states) = value, case .link(let existing) = current, try tx.contains(target.name, existing) {
            for s in states {
                guard let c = target.column(s.name) else { continue }
                if holdsEmbedded(c, in: tx.catalog) && !c.isList && !c.isMap {
                    try setEmbedded(s.value, target, existing, c, tx: tx)
                } else if try wholeSyncValue(try tx.value(target.name, existing, c.name), column: c, at: tx) != s.value {
                    if holdsEmbedded(c, in: tx.catalog), let inner = tx.catalog.table(c.linkTarget!) {
                        for k in Realm.linkKeys(try tx.value(target.name, existing, c.name)) { try deleteCascading(inner, k, tx: tx) }
                    }
                    if let v = try wholeStorageValue(s.value, column: c, tx: tx) { try tx.set(target.name, existing, c.name, v) }
                }
            }
            return
        }
        for k in Realm.linkKeys(current) where try tx.contains(target.name, k) { try deleteCascading(target, k, tx: tx) }
        if case .embedded(let states) = value {
            try tx.set(table.name, key, column.name, .link(try insertEmbedded(states, into: target, tx: tx)))
        } else {
            try tx.set(table.name, key, column.name, .null)
        }
    }

    // MARK: From commits to uploads

    /// Where an embedded object lives: its owner (a top-level or embedded object), the owner's
    /// property, and whether that property is a collection.
    struct EmbeddedOwner {
        var table: TableSchema
        var key: ObjectKey
        var column: ColumnSchema
    }

    /// The instructions for changes made inside embedded objects whose owners' properties were not
    /// set in the same commit (§5, §6.6): a `SET` by path of each property set in an embedded
    /// object held by a single embedded property; a collection of embedded objects (or a
    /// collection inside an embedded object) that changed inside is described as a change of the
    /// collection (whole, inside an embedded object).
    static func describeEmbedded(
        _ changes: Changeset, in source: any QuerySource, before: Snapshot?, schema: SyncedSchema, ids maker: inout ElementIdMaker,
        lists: ListIdentities
    ) throws -> [Instruction] {
        let catalog = source.catalog
        let embeddedNames = Set(schema.embeddedClasses.map(\.name))
        let changed = changes.tables.filter { embeddedNames.contains($0.key) && !$0.value.modified.isEmpty }
        guard !changed.isEmpty else { return [] }
        // The embedded classes whose holders are looked for: the changed ones, and the embedded
        // classes that hold those (up to the top-level owners); other link columns are not read.
        var wanted = Set(changed.keys)
        var grew = true
        while grew {
            grew = false
            for t in catalog.tables where embeddedNames.contains(t.name) && !wanted.contains(t.name) {
                if t.columns.contains(where: { wanted.contains($0.linkTarget ?? "") }) {
                    wanted.insert(t.name)
                    grew = true
                }
            }
        }
        // Who holds each embedded object (built only when an embedded object changed in place).
        var owners: [String: [ObjectKey: EmbeddedOwner]] = [:]
        for t in catalog.tables where embeddedNames.contains(t.name) || schema.synced(t.name) {
            for c in t.columns where holdsEmbedded(c, in: catalog) && wanted.contains(c.linkTarget!) {
                for key in try source.objectKeys(t.name) {
                    for k in Realm.linkKeys(try source.value(t.name, key, c.name)) {
                        owners[c.linkTarget!, default: [:]][k] = EmbeddedOwner(table: t, key: key, column: c)
                    }
                }
            }
        }
        var sets: [Instruction] = []
        var seen = Set<String>()
        var collections: [(TableSchema, ObjectKey, ColumnSchema)] = []
        for (name, t) in changed.sorted(by: { $0.key < $1.key }) {
            guard let table = catalog.table(name) else { continue }
            for key in t.modified.sorted(by: { $0.rawValue < $1.rawValue }) where !t.inserted.contains(key) {
                // The way up to the top-level owner: owners from the nearest to the farthest.
                var chain: [EmbeddedOwner] = []
                var current = (name, key)
                while let owner = owners[current.0]?[current.1], chain.count < 32 {
                    chain.append(owner)
                    current = (owner.table.name, owner.key)
                }
                guard let top = chain.last, schema.synced(top.table.name) else { continue }
                // Nothing to add when an owner on the way was created or set in this commit.
                let covered = chain.contains { o in
                    guard let oc = changes.tables[o.table.name] else { return false }
                    return oc.inserted.contains(o.key) || oc.mayHaveSet(o.column.id, of: o.key)
                }
                if covered { continue }
                let pkColumn = top.table.primaryKeyColumn!
                let id = try syncValue(try source.value(top.table.name, top.key, "_id"), column: pkColumn, at: source)
                // The outermost collection on the way (from the top) is changed whole.
                let downward = Array(chain.reversed())
                let path = downward.map(\.column.name)
                if let at = downward.firstIndex(where: { $0.column.isList || $0.column.isMap }) {
                    let o = downward[at]
                    if at == 0 {
                        collections.append((o.table, o.key, o.column))
                    } else {
                        let value = try wholeSyncValue(try source.value(o.table.name, o.key, o.column.name), column: o.column, at: source)
                        let p = Array(path[...at])
                        if seen.insert("\(top.table.name)/\(id)/\(p)").inserted {
                            sets.append(Instruction(top.table.name, id, .set(path: p, value: value)))
                        }
                    }
                    continue
                }
                for c in table.columns where t.mayHaveSet(c.id, of: key) {
                    let value = try wholeSyncValue(try source.value(name, key, c.name), column: c, at: source)
                    let p = path + [c.name]
                    if seen.insert("\(top.table.name)/\(id)/\(p)").inserted {
                        sets.append(Instruction(top.table.name, id, .set(path: p, value: value)))
                    }
                }
            }
        }
        var out = sets
        var described = Set<String>()
        for (table, key, column) in collections where described.insert("\(table.name)/\(key.rawValue)/\(column.name)").inserted {
            let id = try syncValue(try source.value(table.name, key, "_id"), column: table.primaryKeyColumn!, at: source)
            let old: StorageValue =
                if let before, try before.contains(table.name, key) {
                    try before.value(table.name, key, column.name)
                } else { column.isMap ? .map([:]) : .list([]) }
            out += try describeChange(
                from: old, known: column.isMap ? nil : try lists.known(table.name, id, column.name),
                to: try source.value(table.name, key, column.name), column: column, object: id, className: table.name, at: source,
                oldAt: before, ids: &maker, lists: lists)
        }
        return out
    }
}
