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
}
