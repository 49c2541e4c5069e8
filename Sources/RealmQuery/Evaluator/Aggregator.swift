import RealmStorage

/// Reduces the values a key path reaches to one value (Spec/QUERY.md §7.7): `@count` counts
/// every value (nil included); `@min`, `@max`, `@sum` and `@avg` skip nils. Sums of ints are exact
/// in 128 bits, sums of floats and doubles are computed in double, sums of decimal128 in decimal128.
struct Aggregator {
    let function: AggregateFunction
    /// How many values were added (for `@count` nils included, for the others not).
    private(set) var count = 0
    private var intSum: Int128 = 0
    private var doubleSum = 0.0
    private var decimalSum = Decimal128(0)
    private var sawDecimal = false
    private var sawFloating = false
    private var best: StorageValue?

    init(_ function: AggregateFunction) { self.function = function }

    /// Adds one value.
    mutating func add(_ value: StorageValue) {
        if function == .count {
            count += 1
            return
        }
        if value.isNull { return }
        count += 1
        switch function {
        case .min, .max:
            guard let current = best else {
                best = value
                return
            }
            // NaN never replaces a number, and a number replaces a NaN seen first.
            if case .double(let d) = current, d.isNaN {
                best = value
            } else if case .float(let f) = current, f.isNaN {
                best = value
            } else if let order = ValueOrder.order(value, current), function == .min ? order < 0 : order > 0 {
                best = value
            }
        default:
            switch value {
            case .int(let i): intSum += Int128(i)
            case .float(let f):
                sawFloating = true
                doubleSum += Double(f)
            case .double(let d):
                sawFloating = true
                doubleSum += d
            case .decimal128(let low, let high):
                sawDecimal = true
                decimalSum += Decimal128(low: low, high: high)
            default: count -= 1
            }
        }
    }

    /// Adds `count` non-null ints given by their sum, smallest and largest value (the same result
    /// as adding each).
    mutating func add(intSummary s: (sum: Int128, min: Int64, max: Int64), count n: Int) {
        switch function {
        case .count: count += n
        case .min, .max:
            count += n - 1
            add(.int(function == .min ? s.min : s.max))
        default:
            intSum += s.sum
            count += n
        }
    }

    /// Adds every row of a float or double group without null rows, read in place (the same result
    /// as adding each row in order).
    mutating func add(floatingRowsOf scan: ColumnScan, float: Bool) throws {
        guard scan.rowCount > 0 else { return }
        switch function {
        case .count: count += scan.rowCount
        case .min, .max:
            // NaN loses to any number; all NaN gives NaN.
            let best = try scan.extremeDouble(smallest: function == .min)
            count += scan.rowCount - 1
            add(float ? .float(Float(best)) : .double(best))
        default:
            doubleSum = try scan.sumDoubles(startingAt: doubleSum)
            sawFloating = true
            count += scan.rowCount
        }
    }

    /// The result: `@count` as an int; `@sum` of nothing 0 of `sumType`; `@min`, `@max`, `@avg` of
    /// nothing nil. An int sum beyond `Int64` is returned as an exact decimal128, which compares
    /// exactly with ints (the evaluator's comparisons are numeric across types).
    func result(sumType: ColumnType) -> StorageValue {
        switch function {
        case .count: return .int(Int64(count))
        case .min, .max: return best ?? .null
        case .sum:
            if sawDecimal || sumType == .decimal128 { return Self.storage(mixedDecimalSum) }
            if sawFloating || sumType == .double || sumType == .float { return .double(mixedDoubleSum) }
            return Self.int(intSum)
        case .avg:
            guard count > 0 else { return .null }
            if sawDecimal { return Self.storage(mixedDecimalSum / Decimal128(count)) }
            if sawFloating { return .double(mixedDoubleSum / Double(count)) }
            return .double(Double(intSum) / Double(count))
        }
    }

    /// The sum as a double: the floating values' sum, plus the ints' when mixed values held both
    /// (a typed column holds one kind, and its sum is unchanged).
    private var mixedDoubleSum: Double { intSum == 0 ? doubleSum : doubleSum + Double(intSum) }

    /// The sum as a decimal128: the decimals' sum, plus the other numbers' when mixed values held
    /// them too.
    private var mixedDecimalSum: Decimal128 {
        var sum = decimalSum
        if intSum != 0 { sum += Decimal128(intSum) }
        if sawFloating { sum += Decimal128(doubleSum) }
        return sum
    }

    /// The exact sum of ints: `.int` when it fits, else an exact decimal128.
    var exactIntSum: Int128 { intSum }

    static func int(_ v: Int128) -> StorageValue {
        if let i = Int64(exactly: v) { return .int(i) }
        return storage(Decimal128(v))
    }

    static func storage(_ d: Decimal128) -> StorageValue { .decimal128(low: d.low, high: d.high) }
}
