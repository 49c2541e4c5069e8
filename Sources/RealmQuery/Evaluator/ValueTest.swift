import RealmStorage

/// One operator with its options and its right side, applied to left values
/// (Spec/QUERY.md §7.2–§7.5, §7.9). A constant right side (or the list of `IN` and `BETWEEN`) is
/// prepared once: strings folded by the options, patterns split into scalars.
struct ValueTest {
    let op: ComparisonOperator
    let options: ComparisonOptions
    /// The constant right side (`nil` for `IN`, `BETWEEN` and a key path on the right).
    let constant: StorageValue?
    /// The list after `IN` (its elements) or `BETWEEN` (lower and upper bound).
    let list: [StorageValue]
    /// The constant's pattern, or each list element's, for string and binary operands.
    let pattern: TextPattern?
    let patterns: [TextPattern?]

    /// A test against a constant, a list, or (with `right == nil`) a right side given per object.
    init(_ op: ComparisonOperator, options: ComparisonOptions, right: BoundOperand?) {
        self.op = op
        self.options = options
        switch right {
        case .constant(let value)?:
            constant = value
            list = []
            pattern = TextPattern(value, options: options)
            patterns = []
        case .list(let values)?:
            constant = nil
            list = values
            pattern = nil
            patterns = values.map { TextPattern($0, options: options) }
        default:
            constant = nil
            list = []
            pattern = nil
            patterns = []
        }
    }

    /// Whether `left` satisfies the test against the prepared right side.
    func test(_ left: StorageValue) -> Bool {
        switch op {
        case .in:
            for (i, element) in list.enumerated() where Self.equal(left, element, patterns[i], options) { return true }
            return false
        case .between:
            guard list.count == 2, let lo = ValueOrder.order(list[0], left), let hi = ValueOrder.order(left, list[1]) else {
                return false
            }
            return lo <= 0 && hi <= 0
        default:
            return Self.holds(left, op, constant ?? .null, pattern, options)
        }
    }

    /// Whether `left` satisfies the test against a right side evaluated for this object.
    func test(_ left: StorageValue, against right: StorageValue) -> Bool {
        Self.holds(left, op, right, TextPattern(right, options: options), options)
    }

    /// `left op right`, with `pattern` the prepared form of `right` when it is a string or binary.
    static func holds(
        _ left: StorageValue, _ op: ComparisonOperator, _ right: StorageValue, _ pattern: TextPattern?, _ options: ComparisonOptions
    ) -> Bool {
        switch op {
        case .equal, .in: return equal(left, right, pattern, options)
        case .notEqual: return !equal(left, right, pattern, options)
        case .less: return ValueOrder.order(left, right).map { $0 < 0 } ?? false
        case .lessOrEqual: return ValueOrder.order(left, right).map { $0 <= 0 } ?? false
        case .greater: return ValueOrder.order(left, right).map { $0 > 0 } ?? false
        case .greaterOrEqual: return ValueOrder.order(left, right).map { $0 >= 0 } ?? false
        case .between: return false
        case .beginsWith, .endsWith, .contains:
            return pattern?.matches(left, op, options: options) ?? false
        case .like:
            if right.isNull { return left.isNull }
            return pattern?.matches(left, op, options: options) ?? false
        }
    }

    /// `==` with the options: they fold strings compared with strings and leave other values alone.
    @inline(__always)
    static func equal(_ left: StorageValue, _ right: StorageValue, _ pattern: TextPattern?, _ options: ComparisonOptions) -> Bool {
        if !options.isEmpty, case .string = left, let pattern, pattern.isString {
            return pattern.matches(left, .equal, options: options)
        }
        return ValueOrder.equal(left, right)
    }
}
