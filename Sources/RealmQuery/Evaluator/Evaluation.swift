import RealmStorage

/// An object during evaluation: its table (a slot of the ``Evaluation``), its key and, when known,
/// where it sits in the snapshot (so reading it needs no key lookup).
struct ObjectRef {
    var table: Int
    var key: ObjectKey
    var location: RowLocation?
}

/// What key paths start at: an object, or a value of a list of primitives (a subquery's `$x`).
enum Element {
    case object(ObjectRef)
    case value(StorageValue)
}

/// The reading side of one evaluator call: values of objects through the source (through
/// ``TableReader``s when the source is a snapshot), and backlinks, each built once per call.
///
/// Not thread-safe: one per call.
final class Evaluation {
    let source: any QuerySource
    let snapshot: Snapshot?
    let catalog: Catalog
    /// Table names by slot.
    private(set) var tables: [String] = []
    private var slots: [String: Int] = [:]
    private var readers: [TableReader?] = []
    private var backlinks: [BacklinkKey: [ObjectKey: [ObjectKey]]] = [:]

    private struct BacklinkKey: Hashable {
        let origin: Int
        let column: String
    }

    init(_ source: any QuerySource) {
        self.source = source
        self.snapshot = source as? Snapshot
        self.catalog = source.catalog
    }

    /// The slot of `table`, assigned on first use.
    func slot(_ table: String) -> Int {
        if let s = slots[table] { return s }
        tables.append(table)
        readers.append(nil)
        slots[table] = tables.count - 1
        return tables.count - 1
    }

    /// The snapshot's reader of the table in `slot` (nil for a write transaction).
    func reader(_ slot: Int) throws -> TableReader? {
        guard let snapshot else { return nil }
        if let r = readers[slot] { return r }
        let r = try TableReader(snapshot, tables[slot])
        readers[slot] = r
        return r
    }

    /// The object `key` of the table in `slot`, or nil when the table has no such object (a link
    /// to an object deleted in this transaction's view reads as nil).
    func object(_ slot: Int, _ key: ObjectKey) throws -> ObjectRef? {
        if let reader = try reader(slot) {
            guard let location = try reader.locate(key) else { return nil }
            return ObjectRef(table: slot, key: key, location: location)
        }
        return ObjectRef(table: slot, key: key, location: nil)
    }

    /// The value of `column` (at catalog position `index`) of `object`.
    func value(_ object: ObjectRef, _ column: ColumnSchema, _ index: Int) throws -> StorageValue {
        if let reader = try reader(object.table) {
            var location = object.location
            if location == nil { location = try reader.locate(object.key) }
            guard let location else { throw Self.missing(object.key, tables[object.table]) }
            return try reader.value(location, column: index)
        }
        return try source.value(tables[object.table], object.key, column.name)
    }

    /// The objects of `origin` whose link column `column` points at each object (once per link).
    func backlinks(_ origin: Int, _ column: ColumnSchema, _ index: Int) throws -> [ObjectKey: [ObjectKey]] {
        let key = BacklinkKey(origin: origin, column: column.name)
        if let index = backlinks[key] { return index }
        var out: [ObjectKey: [ObjectKey]] = [:]
        try forEachObject(origin) { ref in
            switch try value(ref, column, index) {
            case .link(let target): out[target, default: []].append(ref.key)
            case .list(let items):
                for case .link(let target) in items { out[target, default: []].append(ref.key) }
            case .map(let entries):
                for (_, v) in Self.sortedEntries(entries) { if case .link(let target) = v { out[target, default: []].append(ref.key) } }
            default: break
            }
        }
        backlinks[key] = out
        return out
    }

    /// Calls `body` with every object of the table in `slot`, in key order.
    func forEachObject(_ slot: Int, _ body: (ObjectRef) throws -> Void) throws {
        if let reader = try reader(slot) {
            for g in 0..<reader.groupCount {
                let keys = try reader.keys(group: g)
                for row in 0..<keys.count {
                    try body(ObjectRef(table: slot, key: ObjectKey(keys[row]), location: RowLocation(group: g, row: row)))
                }
            }
        } else {
            for key in try source.objectKeys(tables[slot]) { try body(ObjectRef(table: slot, key: key, location: nil)) }
        }
    }

    /// A map's entries in the order of their keys' UTF-8 bytes (the stored order), so that every
    /// walk over a map is deterministic.
    static func sortedEntries(_ entries: [String: StorageValue]) -> [(String, StorageValue)] {
        entries.sorted { ValueOrder.bytes($0.key.utf8, $1.key.utf8) < 0 }
    }

    /// The objects of `keys` (ascending or not) with their locations, found by walking the row
    /// groups in step while `keys` ascend: groups that hold none of them are passed by their last
    /// key (never read), and within a group each key is found from the previous one's row by a
    /// galloping search of the keys in place (one step for consecutive keys, a few for scattered
    /// ones).
    func objects(_ slot: Int, _ keys: [ObjectKey]) throws -> [ObjectRef] {
        guard let reader = try reader(slot) else { return keys.map { ObjectRef(table: slot, key: $0, location: nil) } }
        var out: [ObjectRef] = []
        out.reserveCapacity(keys.count)
        var (g, row) = (0, 0)
        var lane: IntegerLane?
        var previous = Int64.min
        for key in keys {
            let k = key.rawValue
            guard k >= previous else {
                guard let location = try reader.locate(key) else { throw Self.missing(key, tables[slot]) }
                out.append(ObjectRef(table: slot, key: key, location: location))
                continue
            }
            previous = k
            while g < reader.groupCount && reader.lastKey(group: g) < k {
                g += 1
                lane = nil
            }
            guard g < reader.groupCount else { throw Self.missing(key, tables[slot]) }
            if lane == nil { row = 0 }
            let l = try lane ?? reader.keys(group: g)
            lane = l
            row = Self.firstPosition(notBelow: k, in: l, from: row)
            guard row < l.count, l[row] == k else { throw Self.missing(key, tables[slot]) }
            out.append(ObjectRef(table: slot, key: key, location: RowLocation(group: g, row: row)))
        }
        return out
    }

    /// The first position at or after `from` whose key is not below `k`, in ascending `keys`:
    /// steps of 1, 2, 4, … until one passes `k`, then a binary search of the last step.
    static func firstPosition(notBelow k: Int64, in keys: IntegerLane, from: Int) -> Int {
        let n = keys.count
        var lo = from
        var hi = from
        var step = 1
        // Every position below `lo` holds a key below `k`; `hi` is `n` or holds one not below.
        while hi < n && keys[hi] < k {
            lo = hi + 1
            hi = from + step
            step <<= 1
        }
        hi = Swift.min(hi, n)
        while lo < hi {
            let mid = (lo + hi) / 2
            if keys[mid] < k { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    static func missing(_ key: ObjectKey, _ table: String) -> StorageError {
        StorageError(.notFound, "no object \(key) in '\(table)'")
    }
}
