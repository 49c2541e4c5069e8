import RealmStorage

/// A predicate checked against a table's schema: every key path resolved to columns, every
/// constant converted to the type it is compared in, every comparison normalized (Spec/QUERY.md
/// §6–§7). This is what the evaluator runs.
///
/// ```swift
/// let bound = try BoundPredicate.compile(
///     "score > 5 AND ANY dogs.name BEGINSWITH[c] 'r'", table: catalog.table("Person")!, catalog: catalog)
/// print(bound)   // score > 5.0 AND ANY dogs.name BEGINSWITH[c] "r"
/// ```
///
/// Normal form of each ``BoundComparison``: the left side is never a constant and is the only side
/// that may be to-many; `IN` and `BETWEEN` have a ``BoundOperand/list(_:)`` on the right; the
/// modifier is set exactly when the left side is to-many. `Sendable`.
package indirect enum BoundPredicate: Sendable, Equatable, CustomStringConvertible {
    /// Always true or always false.
    case constant(Bool)
    /// All hold (true for none).
    case and([BoundPredicate])
    /// At least one holds (false for none).
    case or([BoundPredicate])
    /// Does not hold.
    case not(BoundPredicate)
    /// A comparison.
    case comparison(BoundComparison)

    /// Parses `text` and binds it to `table` (see ``QueryPredicate/parse(_:arguments:)`` and
    /// ``QueryPredicate/bind(to:in:linkingObjects:)``); errors carry `text` for their caret.
    ///
    /// - Throws: ``QueryError``.
    package static func compile(
        _ text: String, arguments: [QueryArgument] = [], table: TableSchema, catalog: Catalog,
        linkingObjects: [LinkingObjectsProperty] = []
    ) throws(QueryError) -> BoundPredicate {
        do {
            return try QueryPredicate.parse(text, arguments: arguments).bind(to: table, in: catalog, linkingObjects: linkingObjects)
        } catch {
            throw error.inText(text)
        }
    }

    /// Query-like text for tests and diagnostics: constants in the engine's value notation.
    package var description: String {
        switch self {
        case .constant(let value): value ? "TRUEPREDICATE" : "FALSEPREDICATE"
        case .and([]): "TRUEPREDICATE"
        case .or([]): "FALSEPREDICATE"
        case .and(let ps):
            ps.map { if case .or(let qs) = $0, qs.count > 1 { "(\($0))" } else { $0.description } }.joined(separator: " AND ")
        case .or(let ps): ps.map(\.description).joined(separator: " OR ")
        case .not(let p):
            switch p {
            case .and(let qs) where qs.count > 1: "NOT (\(p))"
            case .or(let qs) where qs.count > 1: "NOT (\(p))"
            default: "NOT \(p)"
            }
        case .comparison(let c): c.description
        }
    }
}

/// `[modifier] left op[options] right`, in normal form (see ``BoundPredicate``). `Sendable`.
package struct BoundComparison: Sendable, Equatable, CustomStringConvertible {
    /// How the values of a to-many ``left`` combine (written, or `.any` by default); `nil` exactly
    /// when ``left`` is one value per object.
    package var modifier: CollectionModifier?
    /// A key path, aggregate, length or subquery count — never a constant.
    package var left: BoundOperand
    /// The operator. `IN` means "left equals an element of the list on the right".
    package var op: ComparisonOperator
    /// `[c]`/`[d]`: only on string comparisons.
    package var options: ComparisonOptions
    /// One value per object: a constant, a list (for `IN`/`BETWEEN`), or a to-one operand.
    package var right: BoundOperand
    /// The type both sides are compared in (for `.link`, the left side's ``BoundKeyPath/targetTable``
    /// is the table).
    package var valueType: ColumnType

    /// A comparison in normal form (the binder makes these).
    package init(
        modifier: CollectionModifier?, left: BoundOperand, op: ComparisonOperator, options: ComparisonOptions, right: BoundOperand,
        valueType: ColumnType
    ) {
        self.modifier = modifier
        self.left = left
        self.op = op
        self.options = options
        self.right = right
        self.valueType = valueType
    }

    package var description: String {
        (modifier.map { "\($0) " } ?? "") + "\(left) \(op)\(options) \(right)"
    }
}

/// A side of a ``BoundComparison``. `Sendable`.
package enum BoundOperand: Sendable, Equatable, CustomStringConvertible {
    /// The values the key path reaches (one, or many when the path is to-many).
    case keyPath(BoundKeyPath)
    /// A constant of the comparison's type (or `.null`).
    case constant(StorageValue)
    /// The elements after `IN`, or `[lo, hi]` after `BETWEEN`, each of the comparison's type.
    case list([StorageValue])
    /// One value per object: the function over every value the (to-many) key path reaches, nils
    /// skipped; for `@count`, the number of elements reached.
    case aggregate(AggregateFunction, BoundKeyPath)
    /// The length in bytes of each string (UTF-8) or binary value the key path reaches.
    case length(BoundKeyPath)
    /// How many elements of a collection satisfy a predicate.
    case subqueryCount(BoundSubquery)

    package var description: String {
        switch self {
        case .keyPath(let path): path.description
        case .constant(let value): value.description
        case .list(let values): "{" + values.map(\.description).joined(separator: ", ") + "}"
        case .aggregate(let function, let path): "\(path).\(function)"
        case .length(let path): "\(path).@length"
        case .subqueryCount(let subquery): subquery.description
        }
    }
}

/// `SUBQUERY(collection, $variable, predicate).@count`, bound. `Sendable`.
package struct BoundSubquery: Sendable, Equatable, CustomStringConvertible {
    /// A to-many key path: the elements iterated (objects, or values of a list of primitives).
    package var collection: BoundKeyPath
    /// The variable's name, for ``description``.
    package var variable: String
    /// Evaluated with each element as the current object: its key paths start at the element.
    package var predicate: BoundPredicate

    /// A bound subquery.
    package init(collection: BoundKeyPath, variable: String, predicate: BoundPredicate) {
        self.collection = collection
        self.variable = variable
        self.predicate = predicate
    }

    package var description: String { "SUBQUERY(\(collection), $\(variable), \(predicate)).@count" }
}
