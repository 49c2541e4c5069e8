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

    private static let precision = 34
    private static let exponentBias = 6176
    private static let minExponent = -6176
    private static let maxExponent = 6111
    private static let signMask: UInt64 = 1 << 63
    private static let quietNaNHigh: UInt64 = 0x7C00_0000_0000_0000
    private static let signalingNaNHigh: UInt64 = 0x7E00_0000_0000_0000
    private static let infinityHigh: UInt64 = 0x7800_0000_0000_0000

    /// A quiet NaN ("not a number").
    public static let nan = Decimal128(low: 0, high: quietNaNHigh)

    /// Positive infinity.
    public static let infinity = Decimal128(low: 0, high: infinityHigh)

    // MARK: - Decoding and encoding of the BID layout

    private enum Decoded {
        case finite(negative: Bool, coefficient: UInt128, exponent: Int)
        case infinity(negative: Bool)
        case nan(signaling: Bool)
    }

    private var decoded: Decoded {
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

    /// Encodes a finite value; the coefficient must be below 10^34 and the exponent in range.
    private init(negative: Bool, coefficient: UInt128, exponent: Int) {
        let biased = UInt64(exponent + Decimal128.exponentBias)
        high = (negative ? Decimal128.signMask : 0) | biased << 49 | UInt64(truncatingIfNeeded: coefficient >> 64)
        low = UInt64(truncatingIfNeeded: coefficient)
    }

    private static func infinity(negative: Bool) -> Decimal128 {
        Decimal128(low: 0, high: infinityHigh | (negative ? signMask : 0))
    }

    /// Rounds an exact (possibly wide) coefficient to 34 digits, half-to-even, and brings the exponent
    /// into range (clamping, gradual underflow to zero, or overflow to infinity).
    ///
    /// `sticky` says that the true value is slightly larger than `coefficient × 10^exponent` (nonzero
    /// digits were discarded below the last digit of `coefficient`).
    private static func rounded(negative: Bool, coefficient: WideUInt, exponent: Int, sticky: Bool) -> Decimal128 {
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

    // MARK: - Parsing

    private static func isDigit(_ char: UInt8) -> Bool {
        char >= UInt8(ascii: "0") && char <= UInt8(ascii: "9")
    }

    private static func parse(_ string: String) -> Decimal128? {
        let chars = Array(string.utf8)
        var index = 0
        var negative = false
        if index < chars.count && (chars[index] == UInt8(ascii: "+") || chars[index] == UInt8(ascii: "-")) {
            negative = chars[index] == UInt8(ascii: "-")
            index += 1
        }
        let word = String(decoding: chars[index...], as: UTF8.self).lowercased()
        switch word {
        case "nan": return .nan
        case "snan": return Decimal128(low: 0, high: signalingNaNHigh)
        case "inf", "infinity": return infinity(negative: negative)
        default: break
        }

        // Keep at most 76 significant digits (10^76 fits in 256 bits); later ones only matter for rounding.
        let maxKept = 76
        var coefficient = WideUInt(0)
        var kept = 0
        var dropped = 0
        var sticky = false
        var fractionDigits = 0
        var sawDigit = false
        var sawPoint = false
        while index < chars.count {
            let char = chars[index]
            if isDigit(char) {
                sawDigit = true
                let digit = char - UInt8(ascii: "0")
                if sawPoint {
                    fractionDigits += 1
                }
                if kept < maxKept {
                    if kept > 0 || digit != 0 {
                        coefficient = coefficient.multiplied(by: 10).adding(WideUInt(UInt128(digit)))
                        kept += 1
                    }
                } else {
                    dropped += 1
                    sticky = sticky || digit != 0
                }
            } else if char == UInt8(ascii: ".") && !sawPoint {
                sawPoint = true
            } else if char == UInt8(ascii: "e") || char == UInt8(ascii: "E") {
                break
            } else {
                return nil
            }
            index += 1
        }
        guard sawDigit else { return nil }

        var exponent = 0
        if index < chars.count {
            index += 1  // skip "e"
            var exponentNegative = false
            if index < chars.count && (chars[index] == UInt8(ascii: "+") || chars[index] == UInt8(ascii: "-")) {
                exponentNegative = chars[index] == UInt8(ascii: "-")
                index += 1
            }
            guard index < chars.count else { return nil }
            while index < chars.count {
                let char = chars[index]
                guard isDigit(char) else { return nil }
                // Saturate: anything this large over- or underflows anyway.
                exponent = Swift.min(exponent * 10 + Int(char - UInt8(ascii: "0")), 1_000_000_000)
                index += 1
            }
            if exponentNegative {
                exponent = -exponent
            }
        }
        return rounded(negative: negative, coefficient: coefficient, exponent: exponent - fractionDigits + dropped, sticky: sticky)
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

    // MARK: - Comparison

    /// Compares two values numerically; `nil` if either is NaN.
    private static func order(_ lhs: Decimal128, _ rhs: Decimal128) -> Int? {
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
    private static func compareMagnitudes(_ ca: UInt128, _ ea: Int, _ cb: UInt128, _ eb: Int) -> Int {
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

    // MARK: - Arithmetic

    private static func add(_ lhs: Decimal128, _ rhs: Decimal128, negatingRight: Bool) -> Decimal128 {
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

    private static func addFinite(_ sa: Bool, _ ca: UInt128, _ ea: Int, _ sb: Bool, _ cb: UInt128, _ eb: Int) -> Decimal128 {
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

    private static func multiply(_ lhs: Decimal128, _ rhs: Decimal128) -> Decimal128 {
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

    private static func divide(_ lhs: Decimal128, _ rhs: Decimal128) -> Decimal128 {
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

    // MARK: - Codable

    /// Decodes a decimal from a string (preferred), an integer or a floating-point number.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let string = try? container.decode(String.self) {
            guard let value = Decimal128.parse(string) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "Invalid Decimal128 string '\(string)'")
            }
            self = value
        } else if let integer = try? container.decode(Int64.self) {
            self.init(integer)
        } else {
            self.init(try container.decode(Double.self))
        }
    }

    /// Encodes the decimal as its ``stringValue``.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(stringValue)
    }
}

// MARK: - Helpers

/// 10^0 ... 10^38 (10^38 is the largest power of ten below 2^128).
private let powersOfTen: [UInt128] = {
    var result: [UInt128] = [1]
    for _ in 1...38 {
        result.append(result[result.count - 1] * 10)
    }
    return result
}()

/// The largest canonical coefficient, 10^34 - 1.
private let maxCoefficient: UInt128 = powersOfTen[34] - 1

/// The number of decimal digits of `value` (0 for zero).
private func decimalDigitCount(_ value: UInt128) -> Int {
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
private struct WideUInt: Comparable {
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
