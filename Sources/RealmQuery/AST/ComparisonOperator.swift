/// The operator of a comparison (Spec/QUERY.md §3, §6).
///
/// The text accepts several spellings of some operators (`=` and `==`, `<>` and `!=`, `=<` and
/// `<=`, `=>` and `>=`); the syntax tree keeps one, and ``description`` prints the canonical one.
/// `Sendable`.
package enum ComparisonOperator: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// `==` (also written `=`).
    case equal = "=="
    /// `!=` (also written `<>`).
    case notEqual = "!="
    /// `<`: numbers and dates.
    case less = "<"
    /// `<=` (also written `=<`): numbers and dates.
    case lessOrEqual = "<="
    /// `>`: numbers and dates.
    case greater = ">"
    /// `>=` (also written `=>`): numbers and dates.
    case greaterOrEqual = ">="
    /// `x BETWEEN {lo, hi}`: `lo <= x && x <= hi`.
    case between = "BETWEEN"
    /// `x IN {a, b}` (x equals one of the elements), or `value IN list` (the list contains it).
    case `in` = "IN"
    /// The string (or binary value) starts with the right side.
    case beginsWith = "BEGINSWITH"
    /// The string (or binary value) ends with the right side.
    case endsWith = "ENDSWITH"
    /// The string (or binary value) contains the right side.
    case contains = "CONTAINS"
    /// Wildcard match: `?` is one Unicode scalar (one byte for binary), `*` any run of them.
    case like = "LIKE"

    package var description: String { rawValue }

    /// The operator that gives the same result with its operands swapped (`a < b` is `b > a`);
    /// `nil` for operators that are not symmetric in that way (`BETWEEN`, `IN`, the string operators).
    package var swapped: ComparisonOperator? {
        switch self {
        case .equal, .notEqual: self
        case .less: .greater
        case .lessOrEqual: .greaterOrEqual
        case .greater: .less
        case .greaterOrEqual: .lessOrEqual
        case .between, .in, .beginsWith, .endsWith, .contains, .like: nil
        }
    }

    /// `BEGINSWITH`, `ENDSWITH`, `CONTAINS`, `LIKE`: the operators on strings and binary data only.
    package var isSubstringOperator: Bool {
        switch self {
        case .beginsWith, .endsWith, .contains, .like: true
        default: false
        }
    }
}

/// The options of a string comparison: `[c]`, `[d]`, `[cd]` (Spec/QUERY.md §7.3). `Sendable`.
package struct ComparisonOptions: OptionSet, Sendable, Hashable, CustomStringConvertible {
    /// The option bits.
    package var rawValue: UInt8
    /// Options from their bits.
    package init(rawValue: UInt8) { self.rawValue = rawValue }

    /// `[c]`: compare after mapping each Unicode scalar to its lowercase mapping.
    package static let caseInsensitive = ComparisonOptions(rawValue: 1)
    /// `[d]`: compare after canonical decomposition with nonspacing marks removed.
    package static let diacriticInsensitive = ComparisonOptions(rawValue: 2)

    /// `""`, `"[c]"`, `"[d]"` or `"[cd]"`.
    package var description: String {
        if isEmpty { return "" }
        return "[" + (contains(.caseInsensitive) ? "c" : "") + (contains(.diacriticInsensitive) ? "d" : "") + "]"
    }
}

/// How a comparison combines the values of a to-many left side (Spec/QUERY.md §7.6). `SOME` is
/// spelled `ANY` in the syntax tree. `Sendable`.
package enum CollectionModifier: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// At least one value satisfies the comparison (the default for a key path through a list).
    case any = "ANY"
    /// Every value satisfies it (true for no values).
    case all = "ALL"
    /// No value satisfies it (true for no values).
    case none = "NONE"

    package var description: String { rawValue }
}

/// A collection operator of a key path: `@count` (also spelled `@size`), `@min`, `@max`, `@sum`,
/// `@avg` (Spec/QUERY.md §7.7). `Sendable`.
package enum AggregateFunction: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// The number of elements (or, on a string or binary value, its length in bytes).
    case count = "@count"
    /// The smallest value; nil for none.
    case min = "@min"
    /// The largest value; nil for none.
    case max = "@max"
    /// The sum; 0 for none.
    case sum = "@sum"
    /// The mean; nil for none.
    case avg = "@avg"

    package var description: String { rawValue }

    /// The function a collection operator names (`"count"`, `"size"`, `"avg"`, …, case-insensitive).
    init?(operatorName name: String) {
        switch name.lowercased() {
        case "count", "size": self = .count
        case "min": self = .min
        case "max": self = .max
        case "sum": self = .sum
        case "avg": self = .avg
        default: return nil
        }
    }
}
