import Foundation
import RealmQuery

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
    /// The options as bits.
    public let rawValue: Int8
    /// Options from their bits.
    public init(rawValue: Int8) { self.rawValue = rawValue }
    /// `[c]`: compare ignoring case.
    public static let caseInsensitive = StringOptions(rawValue: 1)
    /// `[d]`: compare ignoring diacritics.
    public static let diacriticInsensitive = StringOptions(rawValue: 2)

    /// The engine's comparison options.
    var comparisonOptions: ComparisonOptions {
        var o: ComparisonOptions = []
        if contains(.caseInsensitive) { o.insert(.caseInsensitive) }
        if contains(.diacriticInsensitive) { o.insert(.diacriticInsensitive) }
        return o
    }
}

// MARK: - Equality and order

extension Query {
    /// Equal to a value.
    public static func == (lhs: Query, rhs: T) -> Query<Bool> { lhs.compare(.equal, rhs) }
    /// Not equal to a value.
    public static func != (lhs: Query, rhs: T) -> Query<Bool> { lhs.compare(.notEqual, rhs) }
    /// Equal to another property.
    public static func == (lhs: Query, rhs: Query) -> Query<Bool> { lhs.compare(.equal, rhs) }
    /// Not equal to another property.
    public static func != (lhs: Query, rhs: Query) -> Query<Bool> { lhs.compare(.notEqual, rhs) }

    /// Equal to one of `values`.
    public func `in`<S: Sequence>(_ values: S) -> Query<Bool> where S.Element == T { compare(.in, Array(values)) }
}

extension Query where T: _QueryNumeric {
    /// Less than a value.
    public static func < (lhs: Query, rhs: T) -> Query<Bool> { lhs.compare(.less, rhs) }
    /// Less than or equal to a value.
    public static func <= (lhs: Query, rhs: T) -> Query<Bool> { lhs.compare(.lessOrEqual, rhs) }
    /// Greater than a value.
    public static func > (lhs: Query, rhs: T) -> Query<Bool> { lhs.compare(.greater, rhs) }
    /// Greater than or equal to a value.
    public static func >= (lhs: Query, rhs: T) -> Query<Bool> { lhs.compare(.greaterOrEqual, rhs) }
    /// Less than another property.
    public static func < (lhs: Query, rhs: Query) -> Query<Bool> { lhs.compare(.less, rhs) }
    /// Less than or equal to another property.
    public static func <= (lhs: Query, rhs: Query) -> Query<Bool> { lhs.compare(.lessOrEqual, rhs) }
    /// Greater than another property.
    public static func > (lhs: Query, rhs: Query) -> Query<Bool> { lhs.compare(.greater, rhs) }
    /// Greater than or equal to another property.
    public static func >= (lhs: Query, rhs: Query) -> Query<Bool> { lhs.compare(.greaterOrEqual, rhs) }

    /// Within a closed range (inclusive).
    public func contains(_ range: ClosedRange<T>) -> Query<Bool> where T: Comparable {
        compare(.between, [range.lowerBound, range.upperBound])
    }
    /// Within a half-open range.
    public func contains(_ range: Range<T>) -> Query<Bool> where T: Comparable {
        self >= range.lowerBound && self < range.upperBound
    }
}

// MARK: - Strings

extension Query where T: _QueryString {
    private func text(_ op: ComparisonOperator, _ value: String, _ options: StringOptions) -> Query<Bool> {
        compare(op, value, options: options.comparisonOptions)
    }
    /// Contains `value`.
    public func contains(_ value: String, options: StringOptions = []) -> Query<Bool> { text(.contains, value, options) }
    /// Starts with `value`.
    public func starts(with value: String, options: StringOptions = []) -> Query<Bool> { text(.beginsWith, value, options) }
    /// Ends with `value`.
    public func ends(with value: String, options: StringOptions = []) -> Query<Bool> { text(.endsWith, value, options) }
    /// Matches a pattern with `?` (one character) and `*` (any run).
    public func like(_ value: String, caseInsensitive: Bool = false) -> Query<Bool> {
        text(.like, value, caseInsensitive ? .caseInsensitive : [])
    }
    /// Equal to `value` with options.
    public func equals(_ value: String, options: StringOptions = []) -> Query<Bool> { text(.equal, value, options) }
    /// Not equal to `value` with options.
    public func notEquals(_ value: String, options: StringOptions = []) -> Query<Bool> { text(.notEqual, value, options) }
}

// MARK: - Logic

extension Query where T == Bool {
    /// Both hold.
    public static func && (lhs: Query<Bool>, rhs: Query<Bool>) -> Query<Bool> {
        lhs.derived(nil, predicate: lhs.asPredicate && rhs.asPredicate, failure: rhs.failure)
    }
    /// Either holds.
    public static func || (lhs: Query<Bool>, rhs: Query<Bool>) -> Query<Bool> {
        lhs.derived(nil, predicate: lhs.asPredicate || rhs.asPredicate, failure: rhs.failure)
    }
    /// Does not hold.
    public static prefix func ! (q: Query<Bool>) -> Query<Bool> { q.derived(nil, predicate: !q.asPredicate) }
}
