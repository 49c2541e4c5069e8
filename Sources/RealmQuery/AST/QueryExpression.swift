/// One side of a comparison: a key path, a constant, a collection operator over a key path, or the
/// count of a `SUBQUERY` (Spec/QUERY.md §3).
///
/// ```swift
/// let age = QueryExpression.keyPath("owner", "age")           // owner.age
/// let five = QueryExpression.constant(.integer(5))            // 5
/// let count = QueryExpression(.aggregate(.count, collection: PropertyPath(["dogs"]), property: nil))
/// ```
///
/// ``position`` is where the expression starts in the query text (0 for trees built in code); it
/// is source information, not part of the value, so `==` ignores it. `Sendable`.
package struct QueryExpression: Sendable, Equatable, CustomStringConvertible {
    /// What the expression is.
    package enum Kind: Sendable, Equatable {
        /// The value(s) a key path reaches from the object (or from a subquery's variable).
        case keyPath(PropertyPath)
        /// A literal or an argument.
        case constant(QueryValue)
        /// A collection operator: `dogs.@count`, `scores.@avg`, `dogs.@max.age` (`property` is the
        /// part after the operator, for collections of objects), or `dogs.age.@max`.
        case aggregate(AggregateFunction, collection: PropertyPath, property: PropertyPath?)
        /// `SUBQUERY(collection, $variable, predicate).@count`.
        case subqueryCount(Subquery)
    }

    /// What the expression is.
    package var kind: Kind
    /// Offset of the expression's first Unicode scalar in the query text.
    package var position: Int

    /// An expression of `kind` starting at `position`.
    package init(_ kind: Kind, position: Int = 0) {
        self.kind = kind
        self.position = position
    }

    /// A key path from the object: `keyPath("owner", "name")` is `owner.name`.
    package static func keyPath(_ components: String...) -> QueryExpression {
        QueryExpression(.keyPath(PropertyPath(components)))
    }

    /// A constant.
    package static func constant(_ value: QueryValue) -> QueryExpression {
        QueryExpression(.constant(value))
    }

    package static func == (a: QueryExpression, b: QueryExpression) -> Bool { a.kind == b.kind }

    /// The canonical text of the expression.
    package var description: String {
        switch kind {
        case .keyPath(let path): path.description
        case .constant(let value): value.description
        case .aggregate(let function, let collection, nil): "\(collection).\(function)"
        case .aggregate(let function, let collection, let property?): "\(collection).\(function).\(property)"
        case .subqueryCount(let subquery): subquery.description
        }
    }
}

/// A key path: property names separated by dots, optionally starting at a subquery's `$variable`.
///
/// ``componentPositions`` and ``position`` locate the path in the query text for error messages;
/// `==` ignores them. `Sendable`.
package struct PropertyPath: Sendable, Equatable, CustomStringConvertible {
    /// The subquery variable the path starts at (`"d"` for `$d.age`), or `nil` for the object.
    package var variable: String?
    /// The property names, in order. Empty for a bare `$variable`.
    package var components: [String]
    /// The offset of each component in the query text (as many as ``components``).
    package var componentPositions: [Int]
    /// The offset of the path's first Unicode scalar.
    package var position: Int

    /// A path from the object (or from `$variable`) through `components`.
    package init(_ components: [String], variable: String? = nil, componentPositions: [Int]? = nil, position: Int = 0) {
        self.variable = variable
        self.components = components
        self.componentPositions = componentPositions ?? Array(repeating: position, count: components.count)
        self.position = position
    }

    package static func == (a: PropertyPath, b: PropertyPath) -> Bool {
        a.variable == b.variable && a.components == b.components
    }

    /// The position of component `i` (the path's position if unknown).
    func position(of i: Int) -> Int {
        i < componentPositions.count ? componentPositions[i] : position
    }

    /// The canonical text: `$d.age`, `owner.name`; a component that is a reserved word or not an
    /// identifier is written `#name`.
    package var description: String {
        var parts = variable.map { ["$" + $0] } ?? []
        parts += components.map { Keyword.needsEscape($0) ? "#" + $0 : $0 }
        return parts.joined(separator: ".")
    }
}

/// `SUBQUERY(collection, $variable, predicate)`: the elements of `collection` for which
/// `predicate` holds, with `$variable` naming the element. Only its `@count` is an expression.
/// `Sendable`.
package struct Subquery: Sendable, Equatable, CustomStringConvertible {
    /// The key path of the collection (through at least one list).
    package var collection: PropertyPath
    /// The variable's name, without `$`.
    package var variable: String
    /// The condition on each element; every key path in it starts with `$variable`.
    package var predicate: QueryPredicate

    /// `SUBQUERY(collection, $variable, predicate)`.
    package init(collection: PropertyPath, variable: String, predicate: QueryPredicate) {
        self.collection = collection
        self.variable = variable
        self.predicate = predicate
    }

    /// `SUBQUERY(collection, $variable, predicate).@count`.
    package var description: String { "SUBQUERY(\(collection), $\(variable), \(predicate)).@count" }
}
