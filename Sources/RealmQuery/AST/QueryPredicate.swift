/// A query predicate as written: the syntax tree of the NSPredicate format dialect that
/// RealmSwift's `filter` accepts (Spec/QUERY.md).
///
/// Parse text with ``parse(_:arguments:)``, or build the tree in code; then check it against a
/// table with ``bind(to:in:linkingObjects:)``, which resolves key paths and types:
///
/// ```swift
/// let predicate = try QueryPredicate.parse("age > %@ AND name BEGINSWITH[c] 'a'", arguments: [.value(.int(30))])
/// print(predicate)   // age > 30 AND name BEGINSWITH[c] "a"
/// let bound = try predicate.bind(to: catalog.table("Person")!, in: catalog)
/// ```
///
/// `AND` and `OR` are n-ary and flattened (`a AND (b AND c)` is one `and` of three), so long
/// chains do not nest. ``description`` prints canonical text that parses back to an equal tree
/// (constants of ``QueryValue/typed(_:)`` and ``QueryValue/object(table:key:)`` excepted: they have
/// no literal form). `Sendable`.
package indirect enum QueryPredicate: Sendable, Equatable, CustomStringConvertible {
    /// `TRUEPREDICATE` (true) or `FALSEPREDICATE` (false).
    case constant(Bool)
    /// All of the predicates hold (the parser makes two or more; none is true).
    case and([QueryPredicate])
    /// At least one of the predicates holds (the parser makes two or more; none is false).
    case or([QueryPredicate])
    /// The predicate does not hold.
    case not(QueryPredicate)
    /// A comparison of two expressions.
    case comparison(QueryComparison)

    /// `a AND b`, flattening nested `and`s.
    package static func && (a: QueryPredicate, b: QueryPredicate) -> QueryPredicate {
        .and(a.conjuncts + b.conjuncts)
    }

    /// `a OR b`, flattening nested `or`s.
    package static func || (a: QueryPredicate, b: QueryPredicate) -> QueryPredicate {
        .or(a.disjuncts + b.disjuncts)
    }

    /// `NOT a`.
    package static prefix func ! (a: QueryPredicate) -> QueryPredicate { .not(a) }

    var conjuncts: [QueryPredicate] { if case .and(let ps) = self { ps } else { [self] } }
    var disjuncts: [QueryPredicate] { if case .or(let ps) = self { ps } else { [self] } }

    /// The canonical text: upper-case keywords, `==`/`!=` spellings, parentheses only where the
    /// precedence `NOT` > `AND` > `OR` needs them.
    package var description: String {
        switch self {
        case .constant(let value): value ? "TRUEPREDICATE" : "FALSEPREDICATE"
        case .and([]): "TRUEPREDICATE"
        case .or([]): "FALSEPREDICATE"
        case .and(let ps): ps.map { $0.parenthesized(if: $0.isOr) }.joined(separator: " AND ")
        case .or(let ps): ps.map(\.description).joined(separator: " OR ")
        case .not(let p): "NOT " + p.parenthesized(if: p.isOr || p.isAnd)
        case .comparison(let c): c.description
        }
    }

    private var isAnd: Bool { if case .and(let ps) = self { ps.count > 1 } else { false } }
    private var isOr: Bool { if case .or(let ps) = self { ps.count > 1 } else { false } }

    private func parenthesized(if needed: Bool) -> String { needed ? "(\(self))" : description }
}

/// `[modifier] left operator[options] right` (Spec/QUERY.md §3).
///
/// ``position`` (where the comparison starts) and ``operatorPosition`` are source information for
/// error messages; `==` ignores them. `Sendable`.
package struct QueryComparison: Sendable, Equatable, CustomStringConvertible {
    /// `ANY`/`SOME`, `ALL` or `NONE` before the left side; `nil` when none was written.
    package var modifier: CollectionModifier?
    /// The left side (where a modifier applies).
    package var left: QueryExpression
    /// The operator.
    package var op: ComparisonOperator
    /// `[c]`, `[d]`, `[cd]`.
    package var options: ComparisonOptions
    /// The right side.
    package var right: QueryExpression
    /// Offset of the comparison's first Unicode scalar (its modifier or its left side).
    package var position: Int
    /// Offset of the operator.
    package var operatorPosition: Int

    /// A comparison; positions default to 0 (trees built in code have no text).
    package init(
        _ left: QueryExpression, _ op: ComparisonOperator, _ right: QueryExpression, options: ComparisonOptions = [],
        modifier: CollectionModifier? = nil, position: Int? = nil, operatorPosition: Int? = nil
    ) {
        self.modifier = modifier
        self.left = left
        self.op = op
        self.options = options
        self.right = right
        self.position = position ?? left.position
        self.operatorPosition = operatorPosition ?? self.position
    }

    package static func == (a: QueryComparison, b: QueryComparison) -> Bool {
        a.modifier == b.modifier && a.left == b.left && a.op == b.op && a.options == b.options && a.right == b.right
    }

    package var description: String {
        (modifier.map { "\($0) " } ?? "") + "\(left) \(op)\(options) \(right)"
    }
}
