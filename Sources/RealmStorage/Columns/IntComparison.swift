/// A comparison of an integer column against constants, evaluated in tight typed loops over
/// plain and bit-packed segments (the building block the query engine pushes down).
public enum IntComparison: Sendable, Equatable {
    /// Equal to the constant.
    case equal(Int64)
    /// Not equal to the constant.
    case notEqual(Int64)
    /// Less than the constant.
    case less(Int64)
    /// Less than or equal to the constant.
    case lessOrEqual(Int64)
    /// Greater than the constant.
    case greater(Int64)
    /// Greater than or equal to the constant.
    case greaterOrEqual(Int64)
    /// Inclusive range.
    case between(Int64, Int64)

    /// The inclusive range of matching values, and whether the match is that range's complement.
    var range: (lo: Int64, hi: Int64, negated: Bool) {
        switch self {
        case .equal(let v): (v, v, false)
        case .notEqual(let v): (v, v, true)
        case .less(let v): v == .min ? (1, 0, false) : (.min, v - 1, false)
        case .lessOrEqual(let v): (.min, v, false)
        case .greater(let v): v == .max ? (1, 0, false) : (v + 1, .max, false)
        case .greaterOrEqual(let v): (v, .max, false)
        case .between(let a, let b): (a, b, false)
        }
    }

    /// Whether `x` satisfies the comparison.
    public func matches(_ x: Int64) -> Bool {
        let (lo, hi, neg) = range
        return (x >= lo && x <= hi) != neg
    }
}

extension SegmentReader {
    /// Counts non-null rows matching `cmp`; nil when the segment is not a plain integer lane.
    func count(_ cmp: IntComparison) throws -> Int? {
        guard let lane = integers else { return nil }
        if nullable && nullCount > 0 {
            var n = 0
            for i in 0..<rowCount where try !isNull(i) && cmp.matches(lane[i]) { n += 1 }
            return n
        }
        let (lo, hi, neg) = cmp.range
        let inRange = lane.countInRange(lo, hi)
        return neg ? rowCount - inRange : inRange
    }
}
