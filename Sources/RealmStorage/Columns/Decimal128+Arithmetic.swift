/// Decimal128 arithmetic, rounded half-even to 34 digits as IEEE 754-2008 specifies.
extension Decimal128 {
    // MARK: - Arithmetic

    static func add(_ lhs: Decimal128, _ rhs: Decimal128, negatingRight: Bool) -> Decimal128 {
        switch (lhs.decoded, rhs.decoded) {
        case (.nan, _), (_, .nan):
            return .nan
        case (.infinity(let a), .infinity(let b)):
            return a == (b != negatingRight) ? infinity(negative: a) : .nan
        case (.infinity(let a), .finite):
            return infinity(negative: a)
        case (.finite, .infinity(let b)):
            return infinity(negative: b != negatingRight)
        case (.finite(let sa, let ca, let ea), .finite(let sbRaw, let cb, let eb)):
            let sb = sbRaw != negatingRight
            return addFinite(sa, ca, ea, sb, cb, eb)
        }
    }

    static func addFinite(_ sa: Bool, _ ca: UInt128, _ ea: Int, _ sb: Bool, _ cb: UInt128, _ eb: Int) -> Decimal128 {
        let idealExponent = Swift.min(ea, eb)
        if ca == 0 && cb == 0 {
            return Decimal128(negative: sa && sb, coefficient: 0, exponent: idealExponent)
        }
        if ca == 0 || cb == 0 {
            // x + 0: the value is x, expressed with an exponent as close to the ideal one as possible.
            let (sign, coefficient, exponent) = ca == 0 ? (sb, cb, eb) : (sa, ca, ea)
            let shift = Swift.max(0, Swift.min(exponent - idealExponent, precision - decimalDigitCount(coefficient)))
            return Decimal128(negative: sign, coefficient: coefficient * powersOfTen[shift], exponent: exponent - shift)
        }
        var (c1, e1, c2, e2) = (ca, ea, cb, eb)
        // When one operand is entirely below the rounding position of the result, only its sign
        // matters; replace it by a nonzero value that is just as negligible, to bound the work.
        let msd1 = e1 + decimalDigitCount(c1) - 1
        let msd2 = e2 + decimalDigitCount(c2) - 1
        let gap = precision + 2
        if msd1 - msd2 >= gap {
            (c2, e2) = (1, msd1 - gap)
        } else if msd2 - msd1 >= gap {
            (c1, e1) = (1, msd2 - gap)
        }
        let exponent = Swift.min(e1, e2)
        let w1 = WideUInt(c1).multipliedByPowerOfTen(e1 - exponent)
        let w2 = WideUInt(c2).multipliedByPowerOfTen(e2 - exponent)
        let negative: Bool
        let sum: WideUInt
        if sa == sb {
            (negative, sum) = (sa, w1.adding(w2))
        } else if w2 < w1 {
            (negative, sum) = (sa, w1.subtracting(w2))
        } else if w1 < w2 {
            (negative, sum) = (sb, w2.subtracting(w1))
        } else {
            return Decimal128(negative: false, coefficient: 0, exponent: exponent)
        }
        return rounded(negative: negative, coefficient: sum, exponent: exponent, sticky: false)
    }

    static func multiply(_ lhs: Decimal128, _ rhs: Decimal128) -> Decimal128 {
        switch (lhs.decoded, rhs.decoded) {
        case (.nan, _), (_, .nan):
            return .nan
        case (.infinity(let a), .infinity(let b)):
            return infinity(negative: a != b)
        case (.infinity(let a), .finite(let b, let c, _)), (.finite(let b, let c, _), .infinity(let a)):
            return c == 0 ? .nan : infinity(negative: a != b)
        case (.finite(let sa, let ca, let ea), .finite(let sb, let cb, let eb)):
            let product = ca.multipliedFullWidth(by: cb)
            return rounded(negative: sa != sb, coefficient: WideUInt(hi: product.high, lo: product.low), exponent: ea + eb, sticky: false)
        }
    }

    static func divide(_ lhs: Decimal128, _ rhs: Decimal128) -> Decimal128 {
        switch (lhs.decoded, rhs.decoded) {
        case (.nan, _), (_, .nan), (.infinity, .infinity):
            return .nan
        case (.infinity(let a), .finite(let b, _, _)):
            return infinity(negative: a != b)
        case (.finite(let a, _, _), .infinity(let b)):
            return Decimal128(negative: a != b, coefficient: 0, exponent: minExponent)
        case (.finite(let sa, let ca, let ea), .finite(let sb, let cb, let eb)):
            let negative = sa != sb
            if cb == 0 {
                return ca == 0 ? .nan : infinity(negative: negative)
            }
            let idealExponent = ea - eb
            if ca == 0 {
                return rounded(negative: negative, coefficient: WideUInt(0), exponent: idealExponent, sticky: false)
            }
            // Scale the dividend so that the integer quotient has 35 or 36 digits.
            let scale = precision + 1 - decimalDigitCount(ca) + decimalDigitCount(cb)
            let (quotient, remainder) = WideUInt(ca).multipliedByPowerOfTen(scale).quotientAndRemainder(dividingBy: cb)
            var coefficient = quotient
            var exponent = idealExponent - scale
            if remainder == 0 {
                // Exact: use the exponent closest to the ideal one.
                while exponent < idealExponent {
                    let (next, digit) = coefficient.quotientAndRemainder(dividingBy: 10)
                    guard digit == 0 else { break }
                    coefficient = next
                    exponent += 1
                }
            }
            return rounded(negative: negative, coefficient: coefficient, exponent: exponent, sticky: remainder != 0)
        }
    }

    /// Adds two decimals, rounding half-to-even to 34 significant digits.
    public static func + (lhs: Decimal128, rhs: Decimal128) -> Decimal128 {
        add(lhs, rhs, negatingRight: false)
    }

    /// Subtracts one decimal from another, rounding half-to-even to 34 significant digits.
    public static func - (lhs: Decimal128, rhs: Decimal128) -> Decimal128 {
        add(lhs, rhs, negatingRight: true)
    }

    /// Multiplies two decimals, rounding half-to-even to 34 significant digits.
    public static func * (lhs: Decimal128, rhs: Decimal128) -> Decimal128 {
        multiply(lhs, rhs)
    }

    /// Divides one decimal by another, rounding half-to-even to 34 significant digits.
    ///
    /// Division of a nonzero number by zero gives an infinity; `0 / 0` gives NaN.
    public static func / (lhs: Decimal128, rhs: Decimal128) -> Decimal128 {
        divide(lhs, rhs)
    }

    /// Adds `rhs` to `lhs`.
    public static func += (lhs: inout Decimal128, rhs: Decimal128) {
        lhs = lhs + rhs
    }

    /// Subtracts `rhs` from `lhs`.
    public static func -= (lhs: inout Decimal128, rhs: Decimal128) {
        lhs = lhs - rhs
    }

    /// Multiplies `lhs` by `rhs`.
    public static func *= (lhs: inout Decimal128, rhs: Decimal128) {
        lhs = lhs * rhs
    }

    /// Divides `lhs` by `rhs`.
    public static func /= (lhs: inout Decimal128, rhs: Decimal128) {
        lhs = lhs / rhs
    }

    /// The value with its sign flipped.
    public static prefix func - (operand: Decimal128) -> Decimal128 {
        Decimal128(low: operand.low, high: operand.high ^ signMask)
    }
}
