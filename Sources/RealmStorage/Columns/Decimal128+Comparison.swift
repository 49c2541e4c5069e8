/// Decimal128 ordering, equality across exponents, and hashing consistent with it.
extension Decimal128 {
    // MARK: - Comparison

    /// Compares two values numerically; `nil` if either is NaN.
    static func order(_ lhs: Decimal128, _ rhs: Decimal128) -> Int? {
        switch (lhs.decoded, rhs.decoded) {
        case (.nan, _), (_, .nan):
            return nil
        case (.infinity(let a), .infinity(let b)):
            return a == b ? 0 : (a ? -1 : 1)
        case (.infinity(let a), .finite):
            return a ? -1 : 1
        case (.finite, .infinity(let b)):
            return b ? 1 : -1
        case (.finite(let sa, let ca, let ea), .finite(let sb, let cb, let eb)):
            if ca == 0 && cb == 0 { return 0 }
            if ca == 0 { return sb ? 1 : -1 }
            if cb == 0 { return sa ? -1 : 1 }
            if sa != sb { return sa ? -1 : 1 }
            let magnitudeOrder = compareMagnitudes(ca, ea, cb, eb)
            return sa ? -magnitudeOrder : magnitudeOrder
        }
    }

    /// Compares two nonzero finite magnitudes.
    static func compareMagnitudes(_ ca: UInt128, _ ea: Int, _ cb: UInt128, _ eb: Int) -> Int {
        let da = decimalDigitCount(ca)
        let db = decimalDigitCount(cb)
        let msdA = ea + da - 1
        let msdB = eb + db - 1
        if msdA != msdB { return msdA < msdB ? -1 : 1 }
        let scaledA = ca * powersOfTen[precision - da]
        let scaledB = cb * powersOfTen[precision - db]
        return scaledA == scaledB ? 0 : (scaledA < scaledB ? -1 : 1)
    }

    /// Numeric equality: `1.0 == 1.00` and `0 == -0`; NaN is not equal to anything, including itself.
    public static func == (lhs: Decimal128, rhs: Decimal128) -> Bool {
        order(lhs, rhs) == 0
    }

    /// Numeric ordering; `false` if either operand is NaN.
    public static func < (lhs: Decimal128, rhs: Decimal128) -> Bool {
        order(lhs, rhs) == -1
    }

    /// Numeric ordering; `false` if either operand is NaN.
    public static func <= (lhs: Decimal128, rhs: Decimal128) -> Bool {
        guard let result = order(lhs, rhs) else { return false }
        return result <= 0
    }

    /// Numeric ordering; `false` if either operand is NaN.
    public static func > (lhs: Decimal128, rhs: Decimal128) -> Bool {
        order(lhs, rhs) == 1
    }

    /// Numeric ordering; `false` if either operand is NaN.
    public static func >= (lhs: Decimal128, rhs: Decimal128) -> Bool {
        guard let result = order(lhs, rhs) else { return false }
        return result >= 0
    }

    /// Hashes the canonical numeric value, so numerically equal values hash equally.
    public func hash(into hasher: inout Hasher) {
        switch decoded {
        case .nan:
            hasher.combine(0 as UInt8)
        case .infinity(let negative):
            hasher.combine(1 as UInt8)
            hasher.combine(negative)
        case .finite(let negative, var coefficient, var exponent):
            if coefficient == 0 {
                hasher.combine(2 as UInt8)
                return
            }
            while coefficient % 10 == 0 {
                coefficient /= 10
                exponent += 1
            }
            hasher.combine(3 as UInt8)
            hasher.combine(negative)
            hasher.combine(coefficient)
            hasher.combine(exponent)
        }
    }
}
