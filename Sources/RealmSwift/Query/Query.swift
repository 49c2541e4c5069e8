import Foundation
import RealmQuery

/// The type-safe query builder behind `where { }`:
///
/// ```swift
/// let adults = realm.objects(Person.self).where { $0.age >= 18 && $0.name.starts(with: "A", options: .caseInsensitive) }
/// let dogLovers = realm.objects(Person.self).where { $0.dogs.count > 2 || $0.dogs.name.contains("Rex") }
/// ```
///
/// A `Query<T>` stands for a property (or expression) of type `T`; comparisons make a
/// `Query<Bool>`, combined with `&&`, `||` and `!`. Operators exist only for the types they suit,
/// so mistakes are compile-time errors. It builds the query engine's syntax tree directly (the tree
/// `filter(_:_:)` parses its text into), never text that would be parsed again.
@dynamicMemberLookup
public struct Query<T> {
    /// What this query stands for (a key path, a collection operator, a subquery's count); nil for
    /// a `Query<Bool>` made of comparisons.
    let expression: QueryExpression?
    /// For a `Query<Bool>` made of comparisons: the predicate.
    let predicate: QueryPredicate?
    /// The subquery variable in scope (`$x1`), if any, and how deep subqueries nest here.
    let variable: String?
    let depth: Int
    /// Why a value given to this query cannot be a query constant; `where` stops with it.
    let failure: String?

    init(
        expression: QueryExpression? = nil, predicate: QueryPredicate? = nil, variable: String? = nil, depth: Int = 0,
        failure: String? = nil
    ) {
        self.expression = expression
        self.predicate = predicate
        self.variable = variable
        self.depth = depth
        self.failure = failure
    }

    /// The object itself: key paths start here.
    static func root() -> Query { Query(expression: QueryExpression(.keyPath(PropertyPath([])))) }

    /// A value of a collection of values (`self`), for queries on lists, sets and maps of values.
    static func valueRoot() -> Query { Query(expression: QueryExpression(.keyPath(PropertyPath(["self"])))) }

    /// A query of another type in the same scope.
    func derived<U>(_ expression: QueryExpression?, predicate: QueryPredicate? = nil, failure: String? = nil) -> Query<U> {
        Query<U>(expression: expression, predicate: predicate, variable: variable, depth: depth, failure: failure ?? self.failure)
    }

    /// The key path this query stands for; the public operators only make member queries of key paths.
    var path: PropertyPath {
        guard case .keyPath(let p)? = expression?.kind else { fatalError("\(T.self) query has no key path") }
        return p
    }

    func member(_ names: [String]) -> QueryExpression {
        var p = path
        p.components += names
        p.componentPositions += names.map { _ in 0 }
        return QueryExpression(.keyPath(p))
    }

    /// The expression, or the predicate's when this is a comparison (a `Query<Bool>` used as a value).
    var operand: QueryExpression {
        guard let expression else { fatalError("a comparison cannot be compared again; combine it with &&, || or !") }
        return expression
    }

    /// `self op value`.
    func compare(_ op: ComparisonOperator, _ value: Any?, options: ComparisonOptions = [], modifier: CollectionModifier? = nil)
        -> Query<Bool>
    {
        let (constant, problem) = Self.constant(value)
        return derived(
            nil, predicate: .comparison(QueryComparison(operand, op, constant, options: options, modifier: modifier)), failure: problem)
    }

    /// `self op other`.
    func compare<U>(_ op: ComparisonOperator, _ other: Query<U>) -> Query<Bool> {
        derived(nil, predicate: .comparison(QueryComparison(operand, op, other.operand)), failure: other.failure)
    }

    /// A Swift value as a query constant, as `filter` converts a `%@` argument; with the reason
    /// when it cannot be one.
    static func constant(_ value: Any?) -> (QueryExpression, String?) {
        do {
            if let v = QueryValue(argument: try QueryArguments.convert(value)) { return (.constant(v), nil) }
            return (.constant(.null), "\(String(describing: value)) cannot be a query value")
        } catch {
            return (.constant(.null), "\(error)")
        }
    }

    /// The predicate this query stands for (a bare Bool property means `== true`).
    var asPredicate: QueryPredicate {
        predicate ?? .comparison(QueryComparison(operand, .equal, .constant(.bool(true))))
    }

    /// The predicate `isIncluded` builds from this root; stops with the reason when a value in it
    /// cannot be a query constant (as `filter` stops on a bad argument).
    func predicate(of isIncluded: (Query) -> Query<Bool>) -> QueryPredicate {
        let q = isIncluded(self)
        if let failure = q.failure { fatalError("\(Realm.Error(.invalidValue, failure))") }
        return q.asPredicate
    }
}

// MARK: - Members

extension Query where T: ObjectBase {
    /// A property of the object.
    public subscript<V>(dynamicMember keyPath: KeyPath<T, V>) -> Query<V> {
        derived(member(Self.names(keyPath)))
    }

    static func names<V>(_ keyPath: KeyPath<T, V>) -> [String] {
        do { return try KeyPathNames.names(keyPath) } catch { fatalError("\(error)") }
    }
}

/// Optional links: `$0.owner.name`.
public protocol _QueryOptional {
    associatedtype Wrapped
}
extension Optional: _QueryOptional {}

extension Query where T: _QueryOptional, T.Wrapped: ObjectBase {
    /// A property of the linked object (nil links match no value).
    public subscript<V>(dynamicMember keyPath: KeyPath<T.Wrapped, V>) -> Query<V> {
        derived(member(Query<T.Wrapped>.names(keyPath)))
    }
}

/// Collections that queries can look into: `List`, `MutableSet`, `LinkingObjects`.
public protocol _QueryCollection {
    associatedtype _QueryElement
}
extension List: _QueryCollection { public typealias _QueryElement = Element }
extension MutableSet: _QueryCollection { public typealias _QueryElement = Element }
extension LinkingObjects: _QueryCollection { public typealias _QueryElement = Element }

extension Query where T: _QueryCollection, T._QueryElement: ObjectBase {
    /// A property of the collection's objects; comparisons hold when any object satisfies them.
    public subscript<V>(dynamicMember keyPath: KeyPath<T._QueryElement, V>) -> Query<V> {
        derived(member(Query<T._QueryElement>.names(keyPath)))
    }

    /// The collection objects that satisfy `predicate` (a subquery); use its `count`:
    /// `$0.dogs.where { $0.age > 5 }.count > 0`.
    public func `where`(_ predicate: (Query<T._QueryElement>) -> Query<Bool>) -> Query<T> {
        let v = "x\(depth + 1)"
        let element = Query<T._QueryElement>(
            expression: QueryExpression(.keyPath(PropertyPath([], variable: v))), variable: v, depth: depth + 1)
        let inner = predicate(element)
        let subquery = Subquery(collection: path, variable: v, predicate: inner.asPredicate)
        return derived(QueryExpression(.subqueryCount(subquery)), failure: inner.failure)
    }
}

extension Query where T: _QueryCollection {
    /// The number of elements.
    public var count: Query<Int> {
        // A subquery already stands for the count of its matches.
        if case .subqueryCount? = expression?.kind { return derived(expression) }
        return derived(QueryExpression(.aggregate(.count, collection: path, property: nil)))
    }
    /// Whether the collection holds `element`.
    public func contains(_ element: T._QueryElement) -> Query<Bool> {
        let (constant, problem) = Self.constant(element)
        return derived(nil, predicate: .comparison(QueryComparison(constant, .in, operand)), failure: problem)
    }
    /// Whether the collection holds any of `elements`.
    public func containsAny<S: Sequence>(in elements: S) -> Query<Bool> where S.Element == T._QueryElement {
        compare(.in, Array(elements), modifier: .any)
    }
}

extension Query where T: _QueryCollection, T._QueryElement: _QueryNumeric {
    /// The smallest element (nil for none).
    public var min: Query<T._QueryElement?> { derived(QueryExpression(.aggregate(.min, collection: path, property: nil))) }
    /// The largest element (nil for none).
    public var max: Query<T._QueryElement?> { derived(QueryExpression(.aggregate(.max, collection: path, property: nil))) }
    /// The sum of the elements (0 for none).
    public var sum: Query<T._QueryElement> { derived(QueryExpression(.aggregate(.sum, collection: path, property: nil))) }
    /// The mean of the elements (nil for none).
    public var avg: Query<Double?> { derived(QueryExpression(.aggregate(.avg, collection: path, property: nil))) }
}
