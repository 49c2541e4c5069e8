import RealmStorage

/// A ``BoundPredicate`` ready to run: columns resolved to catalog positions, tables to slots of
/// the ``Evaluation``, constants prepared (``ValueTest``).
indirect enum CompiledPredicate {
    case constant(Bool)
    case and([CompiledPredicate])
    case or([CompiledPredicate])
    case not(CompiledPredicate)
    case comparison(CompiledComparison)
}

/// A comparison of a ``CompiledPredicate``.
final class CompiledComparison {
    /// What it was compiled from (the segment scan reads its shape).
    let bound: BoundComparison
    let left: CompiledOperand
    /// `nil` when the ``test`` holds the right side (a constant or a list).
    let right: CompiledOperand?
    let test: ValueTest

    init(bound: BoundComparison, left: CompiledOperand, right: CompiledOperand?, test: ValueTest) {
        self.bound = bound
        self.left = left
        self.right = right
        self.test = test
    }
}

/// A non-constant side of a comparison.
indirect enum CompiledOperand {
    case path(CompiledPath)
    case aggregate(AggregateFunction, CompiledPath, sumType: ColumnType)
    case length(CompiledPath)
    /// The collection, the slot of its objects' table (nil for values), the predicate on each.
    case subquery(CompiledPath, elements: Int?, CompiledPredicate)
}

/// A key path with its columns found: each step reads a column by its catalog position.
struct CompiledPath {
    enum Step {
        /// Reads `column` of the current object; for links `target` is the linked table's slot.
        case column(ColumnSchema, index: Int, target: Int?)
        /// Every object of `origin` whose `column` links to the current object, once per link.
        case backlink(origin: Int, ColumnSchema, index: Int)
    }

    let steps: [Step]
    let isToMany: Bool
    /// The slot of the table of the objects the path reaches, for paths that reach objects.
    let target: Int?
}

extension Evaluation {
    /// Compiles `predicate` for objects of `table`.
    /// - Throws: ``QueryError`` (`.unknownProperty`) when a column of the predicate is not in the
    ///   source's catalog (the schema changed since binding).
    func compile(_ predicate: BoundPredicate) throws(QueryError) -> CompiledPredicate {
        switch predicate {
        case .constant(let b): return .constant(b)
        case .and(let ps): return .and(try ps.map { (p) throws(QueryError) in try compile(p) })
        case .or(let ps): return .or(try ps.map { (p) throws(QueryError) in try compile(p) })
        case .not(let p): return .not(try compile(p))
        case .comparison(let c):
            let left = try compile(c.left)!
            switch c.right {
            case .constant, .list:
                return .comparison(
                    CompiledComparison(
                        bound: c, left: left, right: nil, test: ValueTest(c.op, options: c.options, right: c.right, type: c.valueType)))
            default:
                return .comparison(
                    CompiledComparison(
                        bound: c, left: left, right: try compile(c.right),
                        test: ValueTest(c.op, options: c.options, right: nil, type: c.valueType)))
            }
        }
    }

    /// The operand for a non-constant side (nil for constants and lists).
    func compile(_ operand: BoundOperand) throws(QueryError) -> CompiledOperand? {
        switch operand {
        case .constant, .list: return nil
        case .keyPath(let p): return .path(try compile(p))
        case .aggregate(let f, let p): return .aggregate(f, try compile(p), sumType: p.valueType)
        case .length(let p): return .length(try compile(p))
        case .subqueryCount(let s):
            let collection = try compile(s.collection)
            return .subquery(collection, elements: s.collection.valueType == .link ? collection.target : nil, try compile(s.predicate))
        }
    }

    func compile(_ path: BoundKeyPath) throws(QueryError) -> CompiledPath {
        var steps: [CompiledPath.Step] = []
        for step in path.steps {
            switch step {
            case .column(let table, let column):
                let index = try columnIndex(table, column.name)
                steps.append(.column(column, index: index, target: column.type == .link ? column.linkTarget.map(slot) : nil))
            case .backlink(let origin, let column):
                steps.append(.backlink(origin: slot(origin), column, index: try columnIndex(origin, column.name)))
            }
        }
        return CompiledPath(steps: steps, isToMany: path.isToMany, target: path.valueType == .link ? path.targetTable.map(slot) : nil)
    }

    private func columnIndex(_ table: String, _ column: String) throws(QueryError) -> Int {
        guard let index = catalog.table(table)?.columns.firstIndex(where: { $0.name == column }) else {
            throw QueryError(.unknownProperty, "'\(table)' has no property '\(column)' in the version being read")
        }
        return index
    }

    // MARK: Evaluation

    /// Whether `predicate` holds for `element`.
    func matches(_ predicate: CompiledPredicate, _ element: Element) throws -> Bool {
        switch predicate {
        case .constant(let b): return b
        case .and(let ps):
            for p in ps where !(try matches(p, element)) { return false }
            return true
        case .or(let ps):
            for p in ps where try matches(p, element) { return true }
            return false
        case .not(let p): return !(try matches(p, element))
        case .comparison(let c): return try matches(c, element)
        }
    }

    /// A comparison: once for a one-valued left side, combined by the modifier for a to-many one
    /// (Spec/QUERY.md §7.6).
    func matches(_ c: CompiledComparison, _ element: Element) throws -> Bool {
        let right = try c.right.map { try one($0, element) }
        let test = c.test
        guard let modifier = c.bound.modifier else {
            let left = try one(c.left, element)
            return right.map { test.test(left, against: $0) } ?? test.test(left)
        }
        var hit = false
        switch modifier {
        case .any, .none:
            _ = try each(c.left, element) { v in
                hit = right.map { test.test(v, against: $0) } ?? test.test(v)
                return !hit
            }
            return modifier == .any ? hit : !hit
        case .all:
            var all = true
            _ = try each(c.left, element) { v in
                all = right.map { test.test(v, against: $0) } ?? test.test(v)
                return all
            }
            return all
        }
    }

    /// The value of a one-valued operand.
    func one(_ operand: CompiledOperand, _ element: Element) throws -> StorageValue {
        switch operand {
        case .path(let p):
            var out = StorageValue.null
            _ = try walk(p, element) { v in
                out = v
                return false
            }
            return out
        case .aggregate(let f, let p, let sumType):
            var aggregator = Aggregator(f)
            _ = try walk(p, element) { v in
                aggregator.add(v)
                return true
            }
            return aggregator.result(sumType: sumType)
        case .length(let p): return Self.length(try one(.path(p), element))
        case .subquery(let collection, let elements, let predicate):
            var n: Int64 = 0
            _ = try walk(collection, element) { v in
                if let elements {
                    guard case .link(let key) = v, let object = try object(elements, key) else { return true }
                    if try matches(predicate, .object(object)) { n += 1 }
                } else if try matches(predicate, .value(v)) {
                    n += 1
                }
                return true
            }
            return .int(n)
        }
    }

    /// Calls `body` with each value of a (possibly to-many) operand until it returns false.
    func each(_ operand: CompiledOperand, _ element: Element, _ body: (StorageValue) throws -> Bool) throws -> Bool {
        switch operand {
        case .path(let p): return try walk(p, element, body)
        case .length(let p): return try walk(p, element) { try body(Self.length($0)) }
        default: return try body(try one(operand, element))
        }
    }

    /// The byte length of a string or binary value; nil for nil.
    static func length(_ v: StorageValue) -> StorageValue {
        switch v {
        case .string(let s): .int(Int64(s.utf8.count))
        case .binary(let b): .int(Int64(b.count))
        default: .null
        }
    }
}
