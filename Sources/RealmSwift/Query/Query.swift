import Foundation

/// The type-safe query builder behind `where { }`:
///
/// ```swift
/// let adults = realm.objects(Person.self).where { $0.age >= 18 && $0.name.starts(with: "A", options: .caseInsensitive) }
/// let dogLovers = realm.objects(Person.self).where { $0.dogs.count > 2 || $0.dogs.name.contains("Rex") }
/// ```
///
/// A `Query<T>` stands for a property (or expression) of type `T`; comparisons make a
/// `Query<Bool>`, combined with `&&`, `||` and `!`. Operators exist only for the types they suit,
/// so mistakes are compile-time errors. It builds the same query text `filter(_:_:)` accepts.
@dynamicMemberLookup
public struct Query<T> {
    /// The key path or expression this query stands for, as query text.
    let expression: String
    /// For a `Query<Bool>` made of comparisons: the predicate text and its `%@` arguments.
    let predicate: (text: String, arguments: [Any?])?
    /// The subquery variable in scope (`$x`), if any.
    let variable: String?

    init(expression: String, predicate: (text: String, arguments: [Any?])? = nil, variable: String? = nil) {
        self.expression = expression
        self.predicate = predicate
        self.variable = variable
    }

    static func root(variable: String? = nil) -> Query { Query(expression: variable ?? "", variable: variable) }

    func member(_ names: [String]) -> String {
        (expression.isEmpty ? [] : [expression]).joined() + (expression.isEmpty ? "" : ".") + names.joined(separator: ".")
    }

    func compare(_ op: String, _ value: Any?) -> Query<Bool> {
        Query<Bool>(expression: "", predicate: ("\(expression) \(op) %@", [value]), variable: variable)
    }

    func compare<U>(_ op: String, _ other: Query<U>) -> Query<Bool> {
        Query<Bool>(expression: "", predicate: ("\(expression) \(op) \(other.expression)", []), variable: variable)
    }

    /// The predicate text and arguments this query stands for (a bare Bool property means `== true`).
    var predicateParts: (text: String, arguments: [Any?]) { predicate ?? ("\(expression) == %@", [true]) }
}

// MARK: - Members

extension Query where T: ObjectBase {
    /// A property of the object.
    public subscript<V>(dynamicMember keyPath: KeyPath<T, V>) -> Query<V> {
        Query<V>(expression: member(Self.names(keyPath)), variable: variable)
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
        Query<V>(expression: member(Query<T.Wrapped>.names(keyPath)), variable: variable)
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
        Query<V>(expression: member(Query<T._QueryElement>.names(keyPath)), variable: variable)
    }

    /// The collection objects that satisfy `predicate` (a subquery); use its `count`:
    /// `$0.dogs.where { $0.age > 5 }.count > 0`.
    public func `where`(_ predicate: (Query<T._QueryElement>) -> Query<Bool>) -> Query<T> {
        let v = "$x\(expression.count)"
        let inner = predicate(Query<T._QueryElement>.root(variable: v)).predicateParts
        return Query<T>(expression: "SUBQUERY(\(expression), \(v), \(inner.text))", predicate: nil, variable: variable)
            .withArguments(carriedArguments + inner.arguments)
    }
}

extension Query {
    /// Carries arguments of an embedded expression (a subquery) into the comparison made with it.
    func withArguments(_ args: [Any?]) -> Query {
        args.isEmpty ? self : Query(expression: expression, predicate: ("", args), variable: variable)
    }

    var carriedArguments: [Any?] { predicate?.text.isEmpty == true ? predicate!.arguments : [] }

    func compareCarrying(_ op: String, _ value: Any?) -> Query<Bool> {
        Query<Bool>(expression: "", predicate: ("\(expression) \(op) %@", carriedArguments + [value]), variable: variable)
    }
}

extension Query where T: _QueryCollection {
    /// The number of elements.
    public var count: Query<Int> { Query<Int>(expression: "\(expression).@count", variable: variable).withArguments(carriedArguments) }
    /// Whether the collection holds `element`.
    public func contains(_ element: T._QueryElement) -> Query<Bool> {
        Query<Bool>(expression: "", predicate: ("%@ IN \(expression)", [element]), variable: variable)
    }
    /// Whether the collection holds any of `elements`.
    public func containsAny<S: Sequence>(in elements: S) -> Query<Bool> where S.Element == T._QueryElement {
        Query<Bool>(expression: "", predicate: ("ANY \(expression) IN %@", [Array(elements)]), variable: variable)
    }
}

extension Query where T: _QueryCollection, T._QueryElement: _QueryNumeric {
    /// The smallest element (nil for none).
    public var min: Query<T._QueryElement?> { Query<T._QueryElement?>(expression: "\(expression).@min", variable: variable) }
    /// The largest element (nil for none).
    public var max: Query<T._QueryElement?> { Query<T._QueryElement?>(expression: "\(expression).@max", variable: variable) }
    /// The sum of the elements (0 for none).
    public var sum: Query<T._QueryElement> { Query<T._QueryElement>(expression: "\(expression).@sum", variable: variable) }
    /// The mean of the elements (nil for none).
    public var avg: Query<Double?> { Query<Double?>(expression: "\(expression).@avg", variable: variable) }
}
