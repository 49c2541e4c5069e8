import Foundation

/// The error thrown when a string is not a valid ``Decimal128`` representation.
public struct Decimal128ParseError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The string that could not be parsed.
    public let input: String

    /// Creates an error for the given invalid input.
    public init(input: String) {
        self.input = input
    }

    /// A human-readable explanation of the failure.
    public var description: String {
        "Invalid Decimal128 string '\(input)'"
    }
}

/// A 128-bit IEEE 754-2008 decimal floating-point number (BID encoding), as stored by Realm.
///
/// A `Decimal128` holds up to 34 significant decimal digits exactly, with an exponent in the range
/// −6176…6111 (of the integer coefficient), so values such as `1.1 + 2.2 == 3.3` hold exactly.
/// Results of arithmetic that need more than 34 digits are rounded half-to-even.
///
/// Equality and ordering are numeric: `1.0 == 1.00` even though the two have different
/// representations (and they hash equally). As with `Double`, NaN is unordered: every comparison
/// involving NaN is `false` and `NaN != NaN`, so `Decimal128.nan` is not reflexively equal to itself.
public struct Decimal128: Hashable, Comparable, Sendable, CustomStringConvertible, Codable, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral
{
    /// The low 64 bits of the BID encoding.
    package var low: UInt64
    /// The high 64 bits of the BID encoding (sign, combination field, exponent, top of the coefficient).
    package var high: UInt64

    /// Creates a value from its raw BID words.
    package init(low: UInt64, high: UInt64) {
        self.low = low
        self.high = high
    }

    // MARK: - Constants

    static let precision = 34
    static let exponentBias = 6176
    static let minExponent = -6176
    static let maxExponent = 6111
    static let signMask: UInt64 = 1 << 63
    static let quietNaNHigh: UInt64 = 0x7C00_0000_0000_0000
    static let signalingNaNHigh: UInt64 = 0x7E00_0000_0000_0000
    static let infinityHigh: UInt64 = 0x7800_0000_0000_0000

    /// A quiet NaN ("not a number").
    public static let nan = Decimal128(low: 0, high: quietNaNHigh)

    /// Positive infinity.
    public static let infinity = Decimal128(low: 0, high: infinityHigh)

    // MARK: - Decoding and encoding of the BID layout

    enum Decoded {
        case finite(negative: Bool, coefficient: UInt128, exponent: Int)
        case infinity(negative: Bool)
        case nan(signaling: Bool)
    }

    var decoded: Decoded {
        let negative = high & Decimal128.signMask != 0
        let combination = (high >> 58) & 0x1F
        if combination == 0x1F {
            return .nan(signaling: (high >> 57) & 1 == 1)
        }
        if combination == 0x1E {
            return .infinity(negative: negative)
        }
        if (high >> 61) & 0b11 == 0b11 {
            // "11" form: the implied coefficient is at least 2^113, which exceeds 10^34 - 1, so it is
            // non-canonical and treated as zero.
            let exponent = Int((high >> 47) & 0x3FFF) - Decimal128.exponentBias
            return .finite(negative: negative, coefficient: 0, exponent: exponent)
        }
        let exponent = Int((high >> 49) & 0x3FFF) - Decimal128.exponentBias
        var coefficient = UInt128(high & 0x1_FFFF_FFFF_FFFF) << 64 | UInt128(low)
        if coefficient > maxCoefficient {
            coefficient = 0
        }
        return .finite(negative: negative, coefficient: coefficient, exponent: exponent)
    }

    /// The sign, integer coefficient and exponent of a finite value (the value is
    /// `coefficient × 10^exponent`, negated when `negative`); nil for NaN and the infinities.
    /// For exports that write decimals in another encoding (`realm-dump --export parquet`).
    package var finiteParts: (negative: Bool, coefficient: UInt128, exponent: Int)? {
        if case .finite(let negative, let coefficient, let exponent) = decoded { (negative, coefficient, exponent) } else { nil }
    }

    /// The value × 10^`scale` as an integer, when that is exact and fits `Int128`: the unscaled
    /// integer of a fixed-point decimal with `scale` fractional digits. Nil for NaN, the
    /// infinities, digits below the scale and values too large. For the tools' exports.
    package func unscaledInteger(scale: Int) -> Int128? {
        guard let (negative, coefficient, exponent) = finiteParts else { return nil }
        guard coefficient != 0 else { return 0 }
        let shift = exponent + scale
        guard shift >= 0, shift < powersOfTen.count else { return nil }
        let (unscaled, overflow) = coefficient.multipliedReportingOverflow(by: powersOfTen[shift])
        guard !overflow, unscaled <= UInt128(Int128.max) else { return nil }
        return negative ? -Int128(unscaled) : Int128(unscaled)
    }

    /// Encodes a finite value; the coefficient must be below 10^34 and the exponent in range.
    init(negative: Bool, coefficient: UInt128, exponent: Int) {
        let biased = UInt64(exponent + Decimal128.exponentBias)
        high = (negative ? Decimal128.signMask : 0) | biased << 49 | UInt64(truncatingIfNeeded: coefficient >> 64)
        low = UInt64(truncatingIfNeeded: coefficient)
    }

    static func infinity(negative: Bool) -> Decimal128 {
        Decimal128(low: 0, high: infinityHigh | (negative ? signMask : 0))
    }

    /// Rounds an exact (possibly wide) coefficient to 34 digits, half-to-even, and brings the exponent
    /// into range (clamping, gradual underflow to zero, or overflow to infinity).
    ///
    /// `sticky` says that the true value is slightly larger than `coefficient × 10^exponent` (nonzero
    /// digits were discarded below the last digit of `coefficient`).
    static func rounded(negative: Bool, coefficient: WideUInt, exponent: Int, sticky: Bool) -> Decimal128 {
        var exponent = exponent
        var result: UInt128
        let digits = coefficient.digitCount
        let drop = Swift.max(0, digits - precision, minExponent - exponent)
        if drop > 0 {
            if drop > digits {
                // The value is below a tenth of the new unit, hence below half of it.
                result = 0
            } else {
                let (truncated, lostNonzero) = coefficient.dividedByPowerOfTen(drop - 1)
                let (quotient, lastDigit) = truncated.quotientAndRemainder(dividingBy: 10)
                result = quotient.lo
                let roundUp = lastDigit > 5 || (lastDigit == 5 && (lostNonzero || sticky || result & 1 == 1))
                if roundUp {
                    result += 1
                }
            }
            exponent += drop
            if result == powersOfTen[precision] {
                result = powersOfTen[precision - 1]
                exponent += 1
            }
        } else {
            result = coefficient.lo
        }
        if exponent > maxExponent {
            if result == 0 {
                exponent = maxExponent
            } else {
                let pad = exponent - maxExponent
                guard decimalDigitCount(result) + pad <= precision else {
                    return infinity(negative: negative)
                }
                result *= powersOfTen[pad]
                exponent = maxExponent
            }
        }
        return Decimal128(negative: negative, coefficient: result, exponent: exponent)
    }

    // MARK: - Initializers

    /// Creates a decimal with value zero.
    public init() {
        self.init(negative: false, coefficient: 0, exponent: 0)
    }

    /// Creates a decimal exactly representing the given integer.
    public init(_ value: Int) {
        self.init(negative: value < 0, coefficient: UInt128(value.magnitude), exponent: 0)
    }

    /// Creates a decimal exactly representing the given integer.
    public init(_ value: Int64) {
        self.init(negative: value < 0, coefficient: UInt128(value.magnitude), exponent: 0)
    }

    /// Creates a decimal representing the given integer, rounded to 34 significant digits if needed.
    public init<Source: BinaryInteger>(_ value: Source) {
        if let magnitude = UInt128(exactly: value.magnitude) {
            self = Decimal128.rounded(negative: value < 0, coefficient: WideUInt(magnitude), exponent: 0, sticky: false)
        } else {
            self = Decimal128.parse(String(value)) ?? .nan
        }
    }

    /// Creates a decimal from a `Double`, using the shortest decimal representation that
    /// round-trips to the same `Double` (so `Decimal128(0.1)` is exactly 0.1).
    ///
    /// Trailing fractional zeros are dropped: `Decimal128(2.0)` is `2`.
    public init(_ value: Double) {
        if value.isNaN {
            self = .nan
            return
        }
        if value.isInfinite {
            self = Decimal128.infinity(negative: value < 0)
            return
        }
        guard case .finite(let negative, var coefficient, var exponent) = (Decimal128.parse(value.description) ?? .nan).decoded else {
            self = .nan
            return
        }
        while exponent < 0 && coefficient % 10 == 0 {
            coefficient /= 10
            exponent += 1
        }
        self.init(negative: negative, coefficient: coefficient, exponent: exponent)
    }

    /// Parses a decimal from a string.
    ///
    /// Accepts an optional sign followed by digits with an optional decimal point and an optional
    /// exponent (`"123"`, `"-1.5"`, `".5"`, `"1e-10"`, `"1.23E+5"`), or (case-insensitively)
    /// `"NaN"`, `"sNaN"`, `"Inf"` and `"Infinity"`. More than 34 significant digits are rounded
    /// half-to-even; exponents beyond the representable range overflow to infinity or underflow to zero.
    ///
    /// - Throws: ``Decimal128ParseError`` if the string is not a number.
    public init(string: String) throws {
        guard let value = Decimal128.parse(string) else {
            throw Decimal128ParseError(input: string)
        }
        self = value
    }

    /// Creates a decimal from an integer literal.
    public init(integerLiteral value: Int64) {
        self.init(value)
    }

    /// Creates a decimal from a floating-point literal, like `init(_: Double)`.
    public init(floatLiteral value: Double) {
        self.init(value)
    }

    /// Creates a decimal from a string literal; the literal must be a valid number.
    public init(stringLiteral value: String) {
        do {
            try self.init(string: value)
        } catch {
            preconditionFailure("\(error)")
        }
    }

    // MARK: - Properties

    /// Whether the value is NaN (quiet or signaling).
    public var isNaN: Bool {
        if case .nan = decoded { return true }
        return false
    }

    /// Whether the value is a signaling NaN.
    public var isSignaling: Bool {
        if case .nan(signaling: true) = decoded { return true }
        return false
    }

    /// Whether the value is a signaling NaN (the same as ``isSignaling``).
    public var isSignalingNaN: Bool { isSignaling }

    /// Whether the value is positive or negative infinity.
    public var isInfinite: Bool {
        if case .infinity = decoded { return true }
        return false
    }

    /// Whether the value is neither infinite nor NaN.
    public var isFinite: Bool {
        if case .finite = decoded { return true }
        return false
    }

    /// Whether the value is zero (of either sign and any exponent).
    public var isZero: Bool {
        if case .finite(_, let coefficient, _) = decoded { return coefficient == 0 }
        return false
    }

    /// Whether the sign bit is set (true for negative numbers, `-0` and `-Inf`).
    public var isSignMinus: Bool {
        high & Decimal128.signMask != 0
    }

    /// The sign of the value.
    public var sign: FloatingPointSign {
        isSignMinus ? .minus : .plus
    }

    /// The absolute value.
    public var magnitude: Decimal128 {
        Decimal128(low: low, high: high & ~Decimal128.signMask)
    }

    /// The value in the IEEE 754 "to-scientific-string" form, e.g. `"123"`, `"-1.50"`, `"1.23E+7"`,
    /// `"1E-10"`, `"NaN"`, `"Inf"` or `"-Inf"` (NaNs are printed without sign; signaling NaN is `"sNaN"`).
    public var stringValue: String {
        switch decoded {
        case .nan(let signaling):
            return signaling ? "sNaN" : "NaN"
        case .infinity(let negative):
            return negative ? "-Inf" : "Inf"
        case .finite(let negative, let coefficient, let exponent):
            let digits = Array(String(coefficient).utf8)
            let count = digits.count
            let adjusted = exponent + count - 1
            var out = [UInt8]()
            out.reserveCapacity(count + 12)
            if negative {
                out.append(UInt8(ascii: "-"))
            }
            if exponent <= 0 && adjusted >= -6 {
                let integerDigits = count + exponent
                if exponent == 0 {
                    out.append(contentsOf: digits)
                } else if integerDigits > 0 {
                    out.append(contentsOf: digits[..<integerDigits])
                    out.append(UInt8(ascii: "."))
                    out.append(contentsOf: digits[integerDigits...])
                } else {
                    out.append(contentsOf: "0.".utf8)
                    out.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: -integerDigits))
                    out.append(contentsOf: digits)
                }
            } else {
                out.append(digits[0])
                if count > 1 {
                    out.append(UInt8(ascii: "."))
                    out.append(contentsOf: digits[1...])
                }
                out.append(contentsOf: (adjusted >= 0 ? "E+" : "E-").utf8)
                out.append(contentsOf: String(adjusted.magnitude).utf8)
            }
            return String(decoding: out, as: UTF8.self)
        }
    }

    /// The same as ``stringValue``.
    public var description: String { stringValue }

    /// The nearest `Double` to this value.
    public var doubleValue: Double {
        switch decoded {
        case .nan:
            return .nan
        case .infinity(let negative):
            return negative ? -.infinity : .infinity
        case .finite(let negative, let coefficient, let exponent):
            let magnitude: Double
            if coefficient == 0 {
                magnitude = 0
            } else if exponent > 400 {
                magnitude = .infinity
            } else if exponent < -800 {
                magnitude = 0
            } else {
                magnitude = Double("\(coefficient)e\(exponent)") ?? .nan
            }
            return negative ? -magnitude : magnitude
        }
    }

}

// MARK: - Helpers

/// 10^0 ... 10^38 (10^38 is the largest power of ten below 2^128).
let powersOfTen: [UInt128] = {
    var result: [UInt128] = [1]
    for _ in 1...38 {
        result.append(result[result.count - 1] * 10)
    }
    return result
}()

/// The largest canonical coefficient, 10^34 - 1.
let maxCoefficient: UInt128 = powersOfTen[34] - 1

/// The number of decimal digits of `value` (0 for zero).
package func decimalDigitCount(_ value: UInt128) -> Int {
    var low = 0
    var high = powersOfTen.count
    // Find the smallest n with value < 10^n (or 39 if value >= 10^38).
    while low < high {
        let mid = (low + high) / 2
        if value < powersOfTen[mid] {
            high = mid
        } else {
            low = mid + 1
        }
    }
    return low
}

/// A minimal 256-bit unsigned integer for exact intermediate results (products of two coefficients,
/// aligned sums and scaled dividends all stay below 10^77).
struct WideUInt: Comparable {
    var hi: UInt128
    var lo: UInt128

    init(_ value: UInt128) {
        hi = 0
        lo = value
    }

    init(hi: UInt128, lo: UInt128) {
        self.hi = hi
        self.lo = lo
    }

    static func < (lhs: WideUInt, rhs: WideUInt) -> Bool {
        (lhs.hi, lhs.lo) < (rhs.hi, rhs.lo)
    }

    func adding(_ other: WideUInt) -> WideUInt {
        let (low, carry) = lo.addingReportingOverflow(other.lo)
        return WideUInt(hi: hi + other.hi + (carry ? 1 : 0), lo: low)
    }

    /// `self - other`; requires `other <= self`.
    func subtracting(_ other: WideUInt) -> WideUInt {
        let (low, borrow) = lo.subtractingReportingOverflow(other.lo)
        return WideUInt(hi: hi - other.hi - (borrow ? 1 : 0), lo: low)
    }

    /// `self * factor`; traps if the product does not fit in 256 bits.
    func multiplied(by factor: UInt128) -> WideUInt {
        let lowProduct = lo.multipliedFullWidth(by: factor)
        let highProduct = hi.multipliedFullWidth(by: factor)
        precondition(highProduct.high == 0, "256-bit overflow")
        return WideUInt(hi: highProduct.low + lowProduct.high, lo: lowProduct.low)
    }

    func multipliedByPowerOfTen(_ power: Int) -> WideUInt {
        var result = self
        var remaining = power
        while remaining > 0 {
            let step = Swift.min(remaining, 38)
            result = result.multiplied(by: powersOfTen[step])
            remaining -= step
        }
        return result
    }

    func quotientAndRemainder(dividingBy divisor: UInt128) -> (quotient: WideUInt, remainder: UInt128) {
        let (highQuotient, highRemainder) = hi.quotientAndRemainder(dividingBy: divisor)
        let (lowQuotient, remainder) = divisor.dividingFullWidth((high: highRemainder, low: lo))
        return (WideUInt(hi: highQuotient, lo: lowQuotient), remainder)
    }

    /// `self / 10^power` (truncated), and whether any nonzero digit was discarded.
    func dividedByPowerOfTen(_ power: Int) -> (quotient: WideUInt, lostNonzero: Bool) {
        var result = self
        var lostNonzero = false
        var remaining = power
        while remaining > 0 {
            let step = Swift.min(remaining, 38)
            let (quotient, remainder) = result.quotientAndRemainder(dividingBy: powersOfTen[step])
            result = quotient
            lostNonzero = lostNonzero || remainder != 0
            remaining -= step
        }
        return (result, lostNonzero)
    }

    /// The number of decimal digits (0 for zero).
    var digitCount: Int {
        if hi == 0 {
            return decimalDigitCount(lo)
        }
        return 38 + quotientAndRemainder(dividingBy: powersOfTen[38]).quotient.digitCount
    }
}
