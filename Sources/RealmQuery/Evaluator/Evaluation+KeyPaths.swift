import RealmStorage

/// Walking key paths: the values a path reaches from an element (Spec/QUERY.md §7.1).
extension Evaluation {
    /// Calls `body` with each value `path` reaches from `element` until `body` returns false;
    /// returns false when it stopped early.
    ///
    /// A to-one path reaches exactly one value: nil when a link on the way is nil. A to-many path
    /// reaches one value per element of each list, set, map (its values, in key order) and backlink
    /// on the way; a nil link on the way contributes nothing. A path that ends on a link reaches
    /// `.link(key)` values; one with no steps reaches the element itself.
    @discardableResult
    func walk(_ path: CompiledPath, _ element: Element, _ body: (StorageValue) throws -> Bool) throws -> Bool {
        guard !path.steps.isEmpty else {
            switch element {
            case .value(let v): return try body(v)
            case .object(let o): return try body(.link(o.key))
            }
        }
        guard case .object(let object) = element else { return try body(.null) }
        return try walk(path, 0, object, body)
    }

    private func walk(_ path: CompiledPath, _ i: Int, _ object: ObjectRef, _ body: (StorageValue) throws -> Bool) throws -> Bool {
        switch path.steps[i] {
        case .column(let column, let index, let target):
            switch try value(object, column, index) {
            case .list(let items):
                for item in items where !(try next(path, i, item, target, body)) { return false }
                return true
            case .map(let entries):
                for (_, item) in Self.sortedEntries(entries) where !(try next(path, i, item, target, body)) { return false }
                return true
            case let v:
                return try next(path, i, v, target, body)
            }
        case .backlink(let origin, let column, let index):
            let last = i == path.steps.count - 1
            for key in try backlinks(origin, column, index)[object.key] ?? [] {
                if last {
                    if !(try body(.link(key))) { return false }
                } else if let next = try self.object(origin, key), !(try walk(path, i + 1, next, body)) {
                    return false
                }
            }
            return true
        }
    }

    /// Continues from `value`, read by step `i`: hands it to `body` after the last step, else
    /// follows it as a link.
    private func next(
        _ path: CompiledPath, _ i: Int, _ value: StorageValue, _ target: Int?, _ body: (StorageValue) throws -> Bool
    ) throws -> Bool {
        if i == path.steps.count - 1 { return try body(value) }
        guard case .link(let key) = value, let target, let next = try object(target, key) else {
            // A nil link: the value of a to-one path is nil; a to-many path gets nothing from it.
            return path.isToMany ? true : try body(.null)
        }
        return try walk(path, i + 1, next, body)
    }

    /// The values of a path of one single-value column for each of `objects` (all of one table),
    /// read group by group from the snapshot's segments; nil for other paths or sources.
    func columnValues(_ path: CompiledPath, _ objects: [ObjectRef]) throws -> [StorageValue]? {
        guard path.steps.count == 1, !path.isToMany, case .column(_, let index, _) = path.steps[0], let first = objects.first,
            let reader = try reader(first.table)
        else { return nil }
        var out: [StorageValue] = []
        out.reserveCapacity(objects.count)
        var group = -1
        var values: [StorageValue] = []
        for object in objects {
            guard let location = object.location else { return nil }
            if Int(location.group) != group {
                group = Int(location.group)
                values = try Self.decode(try reader.scan(group: group, column: index))
            }
            out.append(values[Int(location.row)])
        }
        return out
    }

    /// Every row of a scanned column, through the typed lanes where the column has one.
    static func decode(_ scan: ColumnScan) throws -> [StorageValue] {
        if let value = scan.defaultValue { return [StorageValue](repeating: value, count: scan.rowCount) }
        var out: [StorageValue]
        switch scan.column.type {
        case .int where scan.integers != nil: out = scan.integers!.array.map { .int($0) }
        case .bool where scan.integers != nil: out = scan.integers!.array.map { .bool($0 != 0) }
        case .link where scan.integers != nil: out = scan.integers!.array.map { .link(ObjectKey($0)) }
        case .double where scan.isFixedWidth: out = try scan.doubles().map { .double($0) }
        case .float where scan.isFixedWidth: out = try scan.doubles().map { .float(Float($0)) }
        default: return try (0..<scan.rowCount).map { try scan.value($0) }
        }
        if scan.nullCount > 0 {
            for row in 0..<scan.rowCount where try scan.isNull(row) { out[row] = .null }
        }
        return out
    }
}
