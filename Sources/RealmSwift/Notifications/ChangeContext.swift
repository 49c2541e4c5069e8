import RealmStorage

/// Key paths an observer asked for, as column names per component (`["toys", "brand"]`); nil
/// means every property of the object and of the objects it links to (4 levels deep).
typealias ObservedPaths = [[String]]?

/// Which objects count as modified between two snapshots, given the changeset between them and
/// the observer's key paths (Spec: the seeds' key-path rules).
///
/// - no key paths: an object is modified when any of its properties changed, or any property of
///   an object it links to (through links, lists, sets and maps; 4 levels);
/// - `["name"]`: only when `name` was set (to a new value or the same one, as in RealmSwift);
/// - `["toys"]`: when the `toys` collection's contents differ (not when a toy changed);
/// - `["toys.brand"]`: when `toys` differs or the `brand` of a toy in it changed.
final class ChangeContext {
    let old: Snapshot
    let new: Snapshot
    let changes: Changeset
    private var reachableMemo: [String: Bool] = [:]

    static let maximumDepth = 4

    init(old: Snapshot, new: Snapshot, changes: Changeset) {
        self.old = old
        self.new = new
        self.changes = changes
    }

    /// Resolves dotted key paths against `table`'s schema; traps on unknown properties (as
    /// RealmSwift does) with the name of the fix.
    static func resolve(_ keyPaths: [String]?, table: String, catalog: Catalog) -> ObservedPaths {
        guard let keyPaths, !keyPaths.isEmpty else { return nil }
        return keyPaths.map { path in
            var t = table
            var out: [String] = []
            for part in path.split(separator: ".").map(String.init) {
                guard let schema = catalog.table(t), let c = schema.column(part) else {
                    fatalError("Key path '\(path)' does not name a property of '\(t)'; observe existing properties only.")
                }
                out.append(part)
                t = c.linkTarget ?? ""
            }
            return out
        }
    }

    /// The tables whose changes can matter to an observer of `table` (it and everything it links
    /// to, transitively).
    static func reachableTables(from table: String, catalog: Catalog) -> Set<String> {
        var seen: Set<String> = [table]
        var stack = [table]
        while let t = stack.popLast() {
            for c in catalog.table(t)?.columns ?? [] {
                if let target = c.linkTarget, seen.insert(target).inserted { stack.append(target) }
            }
        }
        return seen
    }

    func isTouched(_ table: String) -> Bool { !(changes.tables[table]?.isEmpty ?? true) }

    /// Whether any table reachable from `table` changed.
    func isReachableTouched(_ table: String) -> Bool {
        if let m = reachableMemo[table] { return m }
        let r = Self.reachableTables(from: table, catalog: new.catalog).contains(where: isTouched)
        reachableMemo[table] = r
        return r
    }

    /// The keys among `keys` of `table` that count as modified for `paths`.
    func modifiedKeys(_ table: String, among keys: [ObjectKey], _ paths: ObservedPaths) -> Set<ObjectKey> {
        var out = Set<ObjectKey>()
        for k in changes.tables[table]?.modified ?? [] where isModifiedItself(table, k, paths) { out.insert(k) }
        if needsLinkScan(table, paths) {
            for k in keys where !out.contains(k) && isModifiedThroughLinks(table, k, paths, depth: 0) { out.insert(k) }
        }
        return out
    }

    /// Whether object `key` of `table` counts as modified for `paths`.
    func isModified(_ table: String, _ key: ObjectKey, _ paths: ObservedPaths, depth: Int = 0) -> Bool {
        if changes.tables[table]?.modified.contains(key) == true && isModifiedItself(table, key, paths) { return true }
        return needsLinkScan(table, paths) && isModifiedThroughLinks(table, key, paths, depth: depth)
    }

    /// For an object in the changeset's modified set: whether an observed property was set.
    private func isModifiedItself(_ table: String, _ key: ObjectKey, _ paths: ObservedPaths) -> Bool {
        guard let paths else { return true }
        return paths.contains { wasSet(table, key, $0[0]) }
    }

    /// Whether property `column` of object `key` was set between the versions, to a new value or
    /// to the same one (as in RealmSwift). Changes read from a file of format version 5 or earlier
    /// do not say which object had which column set; there a property counts as set when its value
    /// differs.
    func wasSet(_ table: String, _ key: ObjectKey, _ column: String) -> Bool {
        guard let t = changes.tables[table], let id = new.catalog.table(table)?.column(column)?.id,
            t.mayHaveSet(id, of: key)
        else { return false }
        return t.knowsColumnsPerObject || (try? old.value(table, key, column)) != (try? new.value(table, key, column))
    }

    private func needsLinkScan(_ table: String, _ paths: ObservedPaths) -> Bool {
        guard let schema = new.catalog.table(table) else { return false }
        if let paths {
            return paths.contains { p in
                p.count > 1 && schema.column(p[0])?.linkTarget.map(isReachableTouched) == true
            }
        }
        return schema.columns.contains { $0.linkTarget.map(isReachableTouched) ?? false }
    }

    private func isModifiedThroughLinks(_ table: String, _ key: ObjectKey, _ paths: ObservedPaths, depth: Int) -> Bool {
        guard depth < Self.maximumDepth, let schema = new.catalog.table(table) else { return false }
        if let paths {
            for p in paths where p.count > 1 {
                guard let target = schema.column(p[0])?.linkTarget, isReachableTouched(target),
                    let v = try? new.value(table, key, p[0])
                else { continue }
                let rest: ObservedPaths = [Array(p.dropFirst())]
                for k in Realm.linkKeys(v) where isModified(target, k, rest, depth: depth + 1) { return true }
            }
            return false
        }
        for c in schema.columns {
            guard let target = c.linkTarget, isReachableTouched(target), let v = try? new.value(table, key, c.name) else { continue }
            for k in Realm.linkKeys(v) where isModified(target, k, nil, depth: depth + 1) { return true }
        }
        return false
    }
}
