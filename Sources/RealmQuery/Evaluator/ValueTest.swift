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
    /// The values compared are strings: nil orders before every string (Realm Core's rule for
    /// strings, Spec/QUERY.md §7.5), where for other types it is unordered.
    let nullsFirst: Bool

    /// A test against a constant, a list, or (with `right == nil`) a right side given per object;
    /// `type` is the type both sides are compared in.
    init(_ op: ComparisonOperator, options: ComparisonOptions, right: BoundOperand?, type: ColumnType) {
        self.op = op
        self.options = options
        self.nullsFirst = type == .string
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
            return Self.holds(left, op, constant ?? .null, pattern, options, nullsFirst: nullsFirst)
        }
    }

    /// The order of two values for `<`, `<=`, `>`, `>=`: numbers and timestamps by value, strings
    /// by their UTF-8 bytes (with `[c]`, of their lowercased forms); nil when they are unordered.
    /// Two nils are in order (RealmSwift's `nil <= nil`, never `<`); a nil and a value are only
    /// among strings (`nullsFirst`: nil first, as Realm Core orders them), else unordered.
    static func order(_ left: StorageValue, _ right: StorageValue, _ options: ComparisonOptions, nullsFirst: Bool) -> Int? {
        switch (left.isNull, right.isNull) {
        case (true, true): return 0
        case (true, false): return nullsFirst ? -1 : nil
        case (false, true): return nullsFirst ? 1 : nil
        case (false, false): break
        }
        guard case .string(let a) = left, case .string(let b) = right else { return ValueOrder.order(left, right) }
        let (x, y) = options.contains(.caseInsensitive) ? (a.lowercased(), b.lowercased()) : (a, b)
        if x.utf8.elementsEqual(y.utf8) { return 0 }
        return x.utf8.lexicographicallyPrecedes(y.utf8) ? -1 : 1
    }

    /// Whether `left` satisfies the test against a right side evaluated for this object.
    func test(_ left: StorageValue, against right: StorageValue) -> Bool {
        Self.holds(left, op, right, TextPattern(right, options: options), options, nullsFirst: nullsFirst)
    }

    /// `left op right`, with `pattern` the prepared form of `right` when it is a string or binary.
    static func holds(
        _ left: StorageValue, _ op: ComparisonOperator, _ right: StorageValue, _ pattern: TextPattern?, _ options: ComparisonOptions,
        nullsFirst: Bool
    ) -> Bool {
        switch op {
        case .equal, .in: return equal(left, right, pattern, options)
        case .notEqual: return !equal(left, right, pattern, options)
        // Nil is <= and >= nil (RealmSwift's rule), never < or > anything, except among strings,
        // where it orders before every string (``order(_:_:_:nullsFirst:)``).
        case .less: return order(left, right, options, nullsFirst: nullsFirst).map { $0 < 0 } ?? false
        case .lessOrEqual: return order(left, right, options, nullsFirst: nullsFirst).map { $0 <= 0 } ?? false
        case .greater: return order(left, right, options, nullsFirst: nullsFirst).map { $0 > 0 } ?? false
        case .greaterOrEqual: return order(left, right, options, nullsFirst: nullsFirst).map { $0 >= 0 } ?? false
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
