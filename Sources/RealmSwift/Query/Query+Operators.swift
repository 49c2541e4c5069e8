import Foundation

/// Types with an order queries can use (`<`, `BETWEEN`): numbers and dates, and their optionals.
public protocol _QueryNumeric {}
extension Int: _QueryNumeric {}
extension Int8: _QueryNumeric {}
extension Int16: _QueryNumeric {}
extension Int32: _QueryNumeric {}
extension Int64: _QueryNumeric {}
extension Float: _QueryNumeric {}
extension Double: _QueryNumeric {}
extension Decimal128: _QueryNumeric {}
extension Date: _QueryNumeric {}
extension Optional: _QueryNumeric where Wrapped: _QueryNumeric {}

/// Text types queries can search (`contains`, `starts(with:)`, `like`): `String` and `String?`.
public protocol _QueryString {}
extension String: _QueryString {}
extension Optional: _QueryString where Wrapped: _QueryString {}

/// Case and diacritic options of string queries.
public struct StringOptions: OptionSet, Sendable {
    public let rawValue: Int8
    public init(rawValue: Int8) { self.rawValue = rawValue }
    /// `[c]`: compare ignoring case.
    public static let caseInsensitive = StringOptions(rawValue: 1)
    /// `[d]`: compare ignoring diacritics.
    public static let diacriticInsensitive = StringOptions(rawValue: 2)

    var text: String {
        switch (contains(.caseInsensitive), contains(.diacriticInsensitive)) {
        case (true, true): "[cd]"
        case (true, false): "[c]"
        case (false, true): "[d]"
        case (false, false): ""
        }
    }
}

// MARK: - Equality and order

extension Query {
    /// Equal to a value.
    public static func == (lhs: Query, rhs: T) -> Query<Bool> { lhs.compareCarrying("==", rhs) }
    /// Not equal to a value.
    public static func != (lhs: Query, rhs: T) -> Query<Bool> { lhs.compareCarrying("!=", rhs) }
    /// Equal to another property.
    public static func == (lhs: Query, rhs: Query) -> Query<Bool> { lhs.compare("==", rhs) }
    /// Not equal to another property.
    public static func != (lhs: Query, rhs: Query) -> Query<Bool> { lhs.compare("!=", rhs) }

    /// Equal to one of `values`.
    public func `in`<S: Sequence>(_ values: S) -> Query<Bool> where S.Element == T {
        Query<Bool>(expression: "", predicate: ("\(expression) IN %@", carriedArguments + [Array(values)]), variable: variable)
    }
}

extension Query where T: _QueryNumeric {
    public static func < (lhs: Query, rhs: T) -> Query<Bool> { lhs.compareCarrying("<", rhs) }
    public static func <= (lhs: Query, rhs: T) -> Query<Bool> { lhs.compareCarrying("<=", rhs) }
    public static func > (lhs: Query, rhs: T) -> Query<Bool> { lhs.compareCarrying(">", rhs) }
    public static func >= (lhs: Query, rhs: T) -> Query<Bool> { lhs.compareCarrying(">=", rhs) }
    public static func < (lhs: Query, rhs: Query) -> Query<Bool> { lhs.compare("<", rhs) }
    public static func <= (lhs: Query, rhs: Query) -> Query<Bool> { lhs.compare("<=", rhs) }
    public static func > (lhs: Query, rhs: Query) -> Query<Bool> { lhs.compare(">", rhs) }
    public static func >= (lhs: Query, rhs: Query) -> Query<Bool> { lhs.compare(">=", rhs) }

    /// Within a closed range (inclusive).
    public func contains(_ range: ClosedRange<T>) -> Query<Bool> where T: Comparable {
        Query<Bool>(expression: "", predicate: ("\(expression) BETWEEN %@", [[range.lowerBound, range.upperBound]]), variable: variable)
    }
    /// Within a half-open range.
    public func contains(_ range: Range<T>) -> Query<Bool> where T: Comparable {
        Query<Bool>(
            expression: "", predicate: ("(\(expression) >= %@ AND \(expression) < %@)", [range.lowerBound, range.upperBound]),
            variable: variable)
    }
}

// MARK: - Strings

extension Query where T: _QueryString {
    private func text(_ op: String, _ value: String, _ options: StringOptions) -> Query<Bool> {
        Query<Bool>(expression: "", predicate: ("\(expression) \(op)\(options.text) %@", [value]), variable: variable)
    }
    /// Contains `value`.
    public func contains(_ value: String, options: StringOptions = []) -> Query<Bool> { text("CONTAINS", value, options) }
    /// Starts with `value`.
    public func starts(with value: String, options: StringOptions = []) -> Query<Bool> { text("BEGINSWITH", value, options) }
    /// Ends with `value`.
    public func ends(with value: String, options: StringOptions = []) -> Query<Bool> { text("ENDSWITH", value, options) }
    /// Matches a pattern with `?` (one character) and `*` (any run).
    public func like(_ value: String, caseInsensitive: Bool = false) -> Query<Bool> {
        text("LIKE", value, caseInsensitive ? .caseInsensitive : [])
    }
    /// Equal to `value` with options.
    public func equals(_ value: String, options: StringOptions = []) -> Query<Bool> { text("==", value, options) }
    /// Not equal to `value` with options.
    public func notEquals(_ value: String, options: StringOptions = []) -> Query<Bool> { text("!=", value, options) }
}

// MARK: - Logic

extension Query where T == Bool {
    /// Both hold.
    public static func && (lhs: Query<Bool>, rhs: Query<Bool>) -> Query<Bool> {
        let a = lhs.predicateParts
        let b = rhs.predicateParts
        return Query<Bool>(expression: "", predicate: ("(\(a.text)) AND (\(b.text))", a.arguments + b.arguments), variable: lhs.variable)
    }
    /// Either holds.
    public static func || (lhs: Query<Bool>, rhs: Query<Bool>) -> Query<Bool> {
        let a = lhs.predicateParts
        let b = rhs.predicateParts
        return Query<Bool>(expression: "", predicate: ("(\(a.text)) OR (\(b.text))", a.arguments + b.arguments), variable: lhs.variable)
    }
    /// Does not hold.
    public static prefix func ! (q: Query<Bool>) -> Query<Bool> {
        let a = q.predicateParts
        return Query<Bool>(expression: "", predicate: ("NOT (\(a.text))", a.arguments), variable: q.variable)
    }
}
