import Foundation
import Testing

@testable import RealmStorage

private func dec(_ string: String) -> Decimal128 {
    do {
        return try Decimal128(string: string)
    } catch {
        Issue.record("could not parse \(string): \(error)")
        return .nan
    }
}

private func hex(_ value: UInt64) -> String {
    "0x" + String(value, radix: 16, uppercase: true)
}

@Suite struct Decimal128ParsingTests {
    @Test(arguments: [
        ("123", "123"),
        ("-1.5", "-1.5"),
        ("1e-10", "1E-10"),
        ("1.23E+5", "1.23E+5"),
        (".5", "0.5"),
        ("+7", "7"),
        ("5.", "5"),
        ("0", "0"),
        ("-0", "-0"),
        ("0.00", "0.00"),
        ("0E+3", "0E+3"),
        ("1.50", "1.50"),
        ("-1.50", "-1.50"),
        ("12300000", "12300000"),
        ("1.23E+7", "1.23E+7"),
        ("1.23e7", "1.23E+7"),
        ("0.000001", "0.000001"),
        ("0.0000001", "1E-7"),
        ("0.00000123", "0.00000123"),
        ("123E-10", "1.23E-8"),
        ("12.34E2", "1234"),
        ("1E6", "1E+6"),
        ("0.1", "0.1"),
        ("-0.1", "-0.1"),
        ("10E-8", "1.0E-7"),
        ("100", "100"),
        ("000123.4500", "123.4500"),
        ("-000", "-0"),
        ("1E+0", "1"),
        ("1e-0", "1"),
        ("1E0005", "1E+5"),
    ])
    func parseAndFormat(_ input: String, _ expected: String) throws {
        let value = try Decimal128(string: input)
        #expect(value.stringValue == expected)
        #expect(value.description == expected)
        let reparsed = try Decimal128(string: value.stringValue)
        #expect(reparsed.low == value.low && reparsed.high == value.high)
    }

    @Test(arguments: [
        ("1E+6111", "1E+6111"),
        ("1E-6176", "1E-6176"),
        ("9999999999999999999999999999999999E+6111", "9.999999999999999999999999999999999E+6144"),
        ("-9999999999999999999999999999999999E+6111", "-9.999999999999999999999999999999999E+6144"),
        ("9999999999999999999999999999999999E-6176", "9.999999999999999999999999999999999E-6143"),
        ("9.999999999999999999999999999999999E+6144", "9.999999999999999999999999999999999E+6144"),
        // Exponents above 6111 are clamped by padding the coefficient with zeros.
        ("1E+6144", "1.000000000000000000000000000000000E+6144"),
        ("12E+6130", "1.20000000000000000000E+6131"),
        ("0E+9999", "0E+6111"),
        // Overflow.
        ("1E+6145", "Inf"),
        ("-1E+9999", "-Inf"),
        ("1E+99999999999999999999999", "Inf"),
        ("99999999999999999999999999999999995E+6110", "Inf"),
        // Gradual underflow, rounding half-to-even.
        ("1E-6177", "0E-6176"),
        ("5E-6177", "0E-6176"),
        ("6E-6177", "1E-6176"),
        ("15E-6177", "2E-6176"),
        ("25E-6177", "2E-6176"),
        ("0E-9999", "0E-6176"),
        ("-0E-9999", "-0E-6176"),
        ("1E-99999999999999999999999", "0E-6176"),
        ("123456E-6180", "1.2E-6175"),
    ])
    func exponentEdges(_ input: String, _ expected: String) throws {
        #expect(try Decimal128(string: input).stringValue == expected)
    }

    @Test(arguments: [
        ("12345678901234567890123456789012345", "1.234567890123456789012345678901234E+34"),
        ("12345678901234567890123456789012355", "1.234567890123456789012345678901236E+34"),
        ("123456789012345678901234567890123451", "1.234567890123456789012345678901235E+35"),
        ("0.99999999999999999999999999999999995", "1.000000000000000000000000000000000"),
        ("0.999999999999999999999999999999999949999", "0.9999999999999999999999999999999999"),
        ("1.00000000000000000000000000000000050", "1.000000000000000000000000000000000"),
        (
            "1.000000000000000000000000000000000500000000000000000000000000000000000000000000000000000000000000000000000000001",
            "1.000000000000000000000000000000001"
        ),
        ("-1234567890123456789012345678901234.5", "-1234567890123456789012345678901234"),
        ("1234567890123456789012345678901233.5", "1234567890123456789012345678901234"),
        (
            "0.000000000000000000000000000000000000000000000000012345678901234567890123456789012345",
            "1.234567890123456789012345678901234E-50"
        ),
    ])
    func roundsHalfEvenTo34Digits(_ input: String, _ expected: String) throws {
        #expect(try Decimal128(string: input).stringValue == expected)
    }

    @Test(arguments: [
        ("NaN", "NaN"), ("nan", "NaN"), ("-NaN", "NaN"), ("+nAn", "NaN"), ("sNaN", "sNaN"), ("SNAN", "sNaN"),
        ("Inf", "Inf"), ("inf", "Inf"), ("+Inf", "Inf"), ("Infinity", "Inf"), ("INFINITY", "Inf"),
        ("-Inf", "-Inf"), ("-infinity", "-Inf"),
    ])
    func specialValues(_ input: String, _ expected: String) throws {
        #expect(try Decimal128(string: input).stringValue == expected)
    }

    @Test(arguments: [
        "", "abc", "1.2.3", "1e", "1e+", "1E-", "e5", ".", "-", "+", "1 ", " 1", "1,5", "--1", "+-1", "1e5.5", "0x10",
        "Infin", "NaN1", "1_000", "1e+-5", ".e1", "1..2", "١٢٣",
    ])
    func invalidStringsThrow(_ input: String) {
        #expect(throws: Decimal128ParseError.self) { try Decimal128(string: input) }
        #expect(throws: Decimal128ParseError(input: input)) { try Decimal128(string: input) }
    }

    @Test func literals() {
        let integer: Decimal128 = 42
        let float: Decimal128 = 1.1
        let string: Decimal128 = "1.10"
        #expect(integer.stringValue == "42")
        #expect(float.stringValue == "1.1")
        #expect(string.stringValue == "1.10")
        #expect(float == string)
    }
}

@Suite struct Decimal128EncodingTests {
    @Test(arguments: [
        ("1", UInt64(0x3040_0000_0000_0000), UInt64(1)),
        ("-1", 0xB040_0000_0000_0000, 1),
        ("0.1", 0x303E_0000_0000_0000, 1),
        ("0", 0x3040_0000_0000_0000, 0),
        ("-0", 0xB040_0000_0000_0000, 0),
        ("0.00", 0x303C_0000_0000_0000, 0),
        ("1E-6176", 0, 1),
        ("0E-6176", 0, 0),
        ("1E+6111", 0x5FFE_0000_0000_0000, 1),
        ("9999999999999999999999999999999999E+6111", 0x5FFF_ED09_BEAD_87C0, 0x378D_8E63_FFFF_FFFF),
        ("-9999999999999999999999999999999999E-6176", 0x8001_ED09_BEAD_87C0, 0x378D_8E63_FFFF_FFFF),
        ("18446744073709551616", 0x3040_0000_0000_0001, 0),
        ("-1.5", 0xB03E_0000_0000_0000, 15),
        ("Inf", 0x7800_0000_0000_0000, 0),
        ("-Inf", 0xF800_0000_0000_0000, 0),
        ("NaN", 0x7C00_0000_0000_0000, 0),
        ("sNaN", 0x7E00_0000_0000_0000, 0),
    ])
    func knownEncodings(_ input: String, _ high: UInt64, _ low: UInt64) throws {
        let value = try Decimal128(string: input)
        #expect(hex(value.high) == hex(high))
        #expect(hex(value.low) == hex(low))
        let decoded = Decimal128(low: low, high: high)
        #expect(decoded.stringValue == value.stringValue)
    }

    @Test func defaultIsZero() {
        let zero = Decimal128()
        #expect(zero.high == 0x3040_0000_0000_0000)
        #expect(zero.low == 0)
        #expect(zero.isZero)
        #expect(zero.stringValue == "0")
    }

    @Test func integerInitializers() {
        #expect(Decimal128(1).high == 0x3040_0000_0000_0000)
        #expect(Decimal128(Int.max).stringValue == "9223372036854775807")
        #expect(Decimal128(Int.min).stringValue == "-9223372036854775808")
        #expect(Decimal128(Int64.min).stringValue == "-9223372036854775808")
        #expect(Decimal128(Int64(-5)).stringValue == "-5")
        #expect(Decimal128(UInt64.max).stringValue == "18446744073709551615")
        #expect(Decimal128(Int32(-7)).stringValue == "-7")
        #expect(Decimal128(Int128.max).stringValue == "1.701411834604692317316873037158841E+38")
        #expect(Decimal128(Int128.min).stringValue == "-1.701411834604692317316873037158841E+38")
        #expect(Decimal128(UInt128(9_999_999_999_999_999_999_999_999_999_999_999)).stringValue == "9999999999999999999999999999999999")
    }

    @Test func largeCoefficientFormDecodesAsZero() {
        // Combination field "11" (bits 126-125): the implied coefficient is 0b100 followed by 111 bits,
        // i.e. at least 2^113 > 10^34 - 1, so the value is non-canonical and reads as zero.
        let plain = Decimal128(low: 0, high: 0x6C10_0000_0000_0000)
        #expect(plain.isZero)
        #expect(plain.isFinite)
        #expect(!plain.isNaN && !plain.isInfinite)
        #expect(plain.stringValue == "0")
        #expect(plain == Decimal128(0))

        // Exponent taken from bits 124-111.
        let scaled = Decimal128(low: 0xFFFF_FFFF_FFFF_FFFF, high: 0x6C00_7FFF_FFFF_FFFF)
        #expect(scaled.isZero)
        #expect(scaled.stringValue == "0E-32")

        let negative = Decimal128(low: 1, high: 0xEC10_0000_0000_0001)
        #expect(negative.isZero)
        #expect(negative.isSignMinus)
        #expect(negative.stringValue == "-0")

        // The largest and smallest exponents of this form.
        #expect(Decimal128(low: 0, high: 0x77FF_8000_0000_0000).stringValue == "0E+6111")
        #expect(Decimal128(low: 0, high: 0x6000_0000_0000_0000).stringValue == "0E-6176")

        // Arithmetic treats it as zero.
        #expect((plain + Decimal128(5)).stringValue == "5")
        #expect((plain * Decimal128(5)).isZero)
    }

    @Test func oversizedCoefficientDecodesAsZero() {
        // A 113-bit coefficient above 10^34 - 1 in the ordinary form is non-canonical as well.
        let value = Decimal128(low: 0xFFFF_FFFF_FFFF_FFFF, high: 0x3041_FFFF_FFFF_FFFF)
        #expect(value.isZero)
        #expect(value.stringValue == "0")
        let justAbove = Decimal128(low: 0x378D_8E64_0000_0000, high: 0x3041_ED09_BEAD_87C0)
        #expect(justAbove.isZero)
        let max = Decimal128(low: 0x378D_8E63_FFFF_FFFF, high: 0x3041_ED09_BEAD_87C0)
        #expect(max.stringValue == "9999999999999999999999999999999999")
    }

    @Test func nanAndInfinityEncodings() {
        let nanWithPayload = Decimal128(low: 12345, high: 0xFC00_0000_0000_0042)
        #expect(nanWithPayload.isNaN)
        #expect(!nanWithPayload.isSignaling)
        #expect(nanWithPayload.stringValue == "NaN")
        let signaling = Decimal128(low: 0, high: 0x7E00_0000_0000_0000)
        #expect(signaling.isNaN)
        #expect(signaling.isSignaling)
        #expect(signaling.isSignalingNaN)
        #expect(!Decimal128.nan.isSignaling)
        let infinityWithJunk = Decimal128(low: 99, high: 0x7900_0000_0000_0001)
        #expect(infinityWithJunk.isInfinite)
        #expect(infinityWithJunk == .infinity)
        #expect(Decimal128.infinity.high == 0x7800_0000_0000_0000)
        #expect(Decimal128.nan.high == 0x7C00_0000_0000_0000)
    }

    @Test func rawWordsRoundTrip() throws {
        for string in ["1", "-1.5", "0.1", "1E-6176", "9999999999999999999999999999999999E+6111", "NaN", "-Inf", "-0.00"] {
            let value = try Decimal128(string: string)
            let copy = Decimal128(low: value.low, high: value.high)
            #expect(copy.low == value.low && copy.high == value.high)
            #expect(copy.stringValue == value.stringValue)
        }
    }
}

@Suite struct Decimal128PropertyTests {
    @Test func negativeZero() throws {
        let negativeZero = try Decimal128(string: "-0")
        #expect(negativeZero.isZero)
        #expect(negativeZero.isSignMinus)
        #expect(negativeZero.sign == .minus)
        #expect(negativeZero == Decimal128(0))
        #expect(!(negativeZero < Decimal128(0)))
        #expect(negativeZero.hashValue == Decimal128(0).hashValue)
        #expect((-Decimal128(0)).stringValue == "-0")
        #expect(negativeZero.magnitude.stringValue == "0")
        #expect(negativeZero.doubleValue.sign == .minus)
        #expect((negativeZero + Decimal128(0)).stringValue == "0")
        #expect((negativeZero + negativeZero).stringValue == "-0")
        #expect((negativeZero * Decimal128(5)).stringValue == "-0")
    }

    @Test func flags() {
        let one = Decimal128(1)
        #expect(!one.isNaN && !one.isInfinite && !one.isZero && !one.isSignMinus && one.isFinite)
        #expect(one.sign == .plus)
        #expect((-one).sign == .minus)
        #expect((-one).magnitude == one)
        #expect(Decimal128.nan.isNaN && !Decimal128.nan.isFinite && !Decimal128.nan.isZero)
        #expect(Decimal128.infinity.isInfinite && !Decimal128.infinity.isFinite)
        #expect((-Decimal128.infinity).isSignMinus)
        #expect((-Decimal128.infinity).stringValue == "-Inf")
        #expect((-Decimal128.infinity).magnitude == .infinity)
    }

    @Test(arguments: [
        (0.1, "0.1"),
        (1.0, "1"),
        (2.5, "2.5"),
        (-0.0, "-0"),
        (0.0, "0"),
        (100.0, "100"),
        (1e20, "1E+20"),
        (123.456, "123.456"),
        (-1.25, "-1.25"),
        (1e-5, "0.00001"),
        (Double.leastNonzeroMagnitude, "5E-324"),
        (1.7976931348623157e308, "1.7976931348623157E+308"),
        (0.30000000000000004, "0.30000000000000004"),
        (Double.infinity, "Inf"),
        (-Double.infinity, "-Inf"),
    ])
    func fromDouble(_ value: Double, _ expected: String) {
        #expect(Decimal128(value).stringValue == expected)
    }

    @Test func fromDoubleNaN() {
        #expect(Decimal128(Double.nan).isNaN)
        #expect(!Decimal128(Double.nan).isSignaling)
    }

    @Test(arguments: [
        ("0.1", 0.1),
        ("1.5", 1.5),
        ("-2.25", -2.25),
        ("123456789012345678901234567890", 1.2345678901234568e29),
        ("1E+308", 1e308),
        ("1E+309", Double.infinity),
        ("1E-6176", 0.0),
        ("9999999999999999999999999999999999E+6111", Double.infinity),
        ("-9999999999999999999999999999999999E+6111", -Double.infinity),
        ("4.9E-324", Double.leastNonzeroMagnitude),
        ("0.30000000000000004", 0.30000000000000004),
        ("Inf", Double.infinity),
        ("-Inf", -Double.infinity),
    ])
    func toDouble(_ input: String, _ expected: Double) throws {
        #expect(try Decimal128(string: input).doubleValue == expected)
    }

    @Test func doubleValueOfNaN() {
        #expect(Decimal128.nan.doubleValue.isNaN)
    }

    @Test func doubleRoundTrip() {
        for value in [0.1, 0.2, 1.0 / 3.0, 2.0 / 3.0, 1e-300, 6.02214076e23, -123.456, Double.pi, Double.ulpOfOne] {
            #expect(Decimal128(value).doubleValue == value)
        }
    }
}

@Suite struct Decimal128ArithmeticTests {
    @Test func additionIsExact() {
        #expect(dec("1.1") + dec("2.2") == dec("3.3"))
        #expect((dec("1.1") + dec("2.2")).stringValue == "3.3")
        let literalSum: Decimal128 = 1.1 + 2.2
        #expect(literalSum == 3.3)
        #expect((dec("0.1") + dec("0.2")).stringValue == "0.3")
        #expect((dec("1") - dec("0.9")).stringValue == "0.1")
        #expect((dec("5") - dec("7.25")).stringValue == "-2.25")
        #expect((dec("1.5") + dec("-1.50")).stringValue == "0.00")
        #expect((dec("0E+5") + dec("1.23")).stringValue == "1.23")
        #expect((dec("0E-50") + dec("1.23")).stringValue == "1.230000000000000000000000000000000")
        #expect((dec("123") + dec("0.000")).stringValue == "123.000")
    }

    @Test func sumsOfManyValues() {
        var sum = Decimal128()
        for _ in 0..<10_000 {
            sum += dec("0.1")
        }
        #expect(sum.stringValue == "1000.0")
        #expect(sum == 1000)

        var sevenths = Decimal128()
        for i in 1...1_000 {
            sevenths += Decimal128(i) / Decimal128(7)
        }
        #expect(sevenths.stringValue == "71500.00000000000000000000000000000")

        var mixed = Decimal128()
        let values = ["19.99", "0.01", "-5.5", "1E+3", "2.222", "-0.002"]
        for value in values {
            mixed += dec(value)
        }
        #expect(mixed.stringValue == "1016.720")
        mixed -= dec("1016.72")
        #expect(mixed.isZero)
    }

    @Test func additionRoundsHalfEven() {
        #expect((dec("1") - dec("1E-34")).stringValue == "0.9999999999999999999999999999999999")
        #expect((dec("1") - dec("1E-35")).stringValue == "1.000000000000000000000000000000000")
        #expect((dec("1") - dec("5E-35")).stringValue == "1.000000000000000000000000000000000")
        #expect((dec("1") - dec("6E-35")).stringValue == "0.9999999999999999999999999999999999")
        #expect((dec("1E+40") - dec("1E-40")).stringValue == "1.000000000000000000000000000000000E+40")
        #expect((dec("1E+40") + dec("1E-40")).stringValue == "1.000000000000000000000000000000000E+40")
        #expect(
            (dec("9999999999999999999999999999999999") + dec("0.5")).stringValue == "1.000000000000000000000000000000000E+34"
        )
        #expect((dec("9999999999999999999999999999999998") + dec("0.5")).stringValue == "9999999999999999999999999999999998")
    }

    @Test func overflowAndSpecials() {
        let max = dec("9999999999999999999999999999999999E+6111")
        #expect((max + max).stringValue == "Inf")
        #expect((-max - max).stringValue == "-Inf")
        #expect((max * Decimal128(10)).stringValue == "Inf")
        #expect((Decimal128.infinity + Decimal128(1)) == .infinity)
        #expect((Decimal128.infinity - Decimal128.infinity).isNaN)
        #expect((Decimal128.infinity + Decimal128.infinity) == .infinity)
        #expect((Decimal128.infinity * Decimal128(0)).isNaN)
        #expect((Decimal128.infinity * Decimal128(-2)) == -Decimal128.infinity)
        #expect((Decimal128.nan + Decimal128(1)).isNaN)
        #expect((Decimal128(1) - Decimal128.nan).isNaN)
        let signaling = Decimal128(low: 0, high: 0x7E00_0000_0000_0000)
        #expect((signaling + Decimal128(1)).isNaN)
        #expect(!(signaling + Decimal128(1)).isSignaling)
    }

    @Test func multiplication() {
        #expect((dec("0.1") * Decimal128(3)).stringValue == "0.3")
        #expect((dec("1.10") * dec("2.0")).stringValue == "2.200")
        #expect((dec("-1.5") * dec("-2")).stringValue == "3.0")
        #expect((dec("-1.5") * dec("2")).stringValue == "-3.0")
        let nines = dec("9999999999999999999999999999999999")
        #expect((nines * nines).stringValue == "9.999999999999999999999999999999998E+67")
        #expect((dec("1E-3000") * dec("1E-3000")).stringValue == "1E-6000")
        #expect((dec("1E-6176") * dec("0.1")).stringValue == "0E-6176")
        #expect((dec("1E-6176") * dec("0.5")).stringValue == "0E-6176")
        #expect((dec("1E-6176") * dec("0.51")).stringValue == "1E-6176")
        var product = Decimal128(1)
        product *= dec("1.5")
        #expect(product.stringValue == "1.5")
    }

    @Test func division() {
        let third = Decimal128(1) / Decimal128(3)
        #expect(third.stringValue == "0.3333333333333333333333333333333333")
        #expect(third.stringValue.filter { $0 == "3" }.count == 34)
        #expect((Decimal128(2) / Decimal128(3)).stringValue == "0.6666666666666666666666666666666667")
        #expect((Decimal128(1) / Decimal128(4)).stringValue == "0.25")
        #expect((Decimal128(6) / Decimal128(2)).stringValue == "3")
        #expect((Decimal128(10) / Decimal128(4)).stringValue == "2.5")
        #expect((Decimal128(1) / Decimal128(-8)).stringValue == "-0.125")
        #expect((dec("100") / dec("1E+2")).stringValue == "1.00")
        #expect((dec("4.0") / Decimal128(2)).stringValue == "2.0")
        #expect((dec("0") / Decimal128(-5)).stringValue == "-0")
        #expect((dec("1E-6176") / Decimal128(2)).stringValue == "0E-6176")
        #expect((dec("3E-6176") / Decimal128(2)).stringValue == "2E-6176")
        #expect((dec("1E+6111") / dec("1E-6176")).stringValue == "Inf")
        var quotient = Decimal128(7)
        quotient /= Decimal128(2)
        #expect(quotient.stringValue == "3.5")
    }

    @Test func divisionBySpecials() {
        #expect((Decimal128(1) / Decimal128(0)) == .infinity)
        #expect((Decimal128(-1) / Decimal128(0)) == -Decimal128.infinity)
        #expect((Decimal128(0) / Decimal128(0)).isNaN)
        #expect((Decimal128.infinity / Decimal128.infinity).isNaN)
        #expect((Decimal128.infinity / Decimal128(-3)) == -Decimal128.infinity)
        #expect((Decimal128(1) / Decimal128.infinity).stringValue == "0E-6176")
        #expect((Decimal128(-1) / Decimal128.infinity).stringValue == "-0E-6176")
        #expect((Decimal128.nan / Decimal128(1)).isNaN)
    }

    @Test func average() {
        func average(_ values: [Decimal128]) -> Decimal128 {
            var sum = Decimal128()
            for value in values {
                sum += value
            }
            return sum / Decimal128(values.count)
        }
        #expect(average([1, 2, 3, 4]).stringValue == "2.5")
        #expect(average([dec("1.5"), dec("2.5")]).stringValue == "2.0")
        #expect(average([1, 2]) == dec("1.5"))
        #expect(average([1, 1, 2]).stringValue == "1.333333333333333333333333333333333")
        #expect(average([dec("0.1"), dec("0.2"), dec("0.3")]) == dec("0.2"))
    }

    @Test func negation() {
        #expect((-dec("1.5")).stringValue == "-1.5")
        #expect((-(-dec("1.5"))).stringValue == "1.5")
        #expect((-Decimal128.nan).isNaN)
    }
}

@Suite struct Decimal128ComparisonTests {
    @Test func equalityAcrossExponents() {
        #expect(dec("1.0") == dec("1.00"))
        #expect(dec("1") == dec("1.000000000000000000000000000000000"))
        #expect(dec("100") == dec("1E+2"))
        #expect(dec("0.5") == dec("5E-1"))
        #expect(dec("0") == dec("0E+100"))
        #expect(dec("0") == dec("-0E-100"))
        #expect(dec("1.0") != dec("1.01"))
        #expect(dec("-1.0") != dec("1.0"))
        #expect(dec("1E+6111") == dec("10E+6110"))
    }

    @Test func ordering() {
        let ascending = [
            "-Inf", "-9999999999999999999999999999999999E+6111", "-1E+10", "-2", "-1.5", "-1", "-0.999", "-1E-6176", "0",
            "1E-6176", "0.001", "0.0011", "0.1", "0.999", "1", "1.000000000000000000000000000000001", "1.01", "2", "10", "1E+10",
            "9999999999999999999999999999999999E+6111", "Inf",
        ].map(dec)
        for i in ascending.indices {
            for j in ascending.indices {
                #expect((ascending[i] < ascending[j]) == (i < j))
                #expect((ascending[i] > ascending[j]) == (i > j))
                #expect((ascending[i] <= ascending[j]) == (i <= j))
                #expect((ascending[i] >= ascending[j]) == (i >= j))
                #expect((ascending[i] == ascending[j]) == (i == j))
            }
        }
        #expect(ascending.shuffled().sorted().map(\.stringValue) == ascending.map(\.stringValue))
    }

    @Test func nanIsUnordered() {
        let nan = Decimal128.nan
        let one = Decimal128(1)
        #expect(!(nan == nan))
        #expect(nan != nan)
        #expect(!(nan < one) && !(one < nan))
        #expect(!(nan <= one) && !(one <= nan))
        #expect(!(nan > one) && !(one > nan))
        #expect(!(nan >= one) && !(one >= nan))
        #expect(!(nan < .infinity))
    }

    @Test func hashingIsConsistentWithEquality() {
        let groups: [[String]] = [
            ["1", "1.0", "1.00", "1.000000000000000000000000000000000", "0.1E+1"],
            ["0", "-0", "0.00", "0E+300", "-0E-6176"],
            ["100", "1E+2", "100.0", "10E+1"],
            ["-2.5", "-25E-1", "-2.50"],
            ["Inf", "Infinity"],
        ]
        for group in groups {
            let values = group.map(dec)
            #expect(Set(values).count == 1, "\(group)")
            for value in values {
                #expect(value == values[0])
                #expect(value.hashValue == values[0].hashValue)
            }
        }
        let distinct = Set(groups.map { dec($0[0]) } + [dec("-Inf"), dec("2.5"), dec("1.01")])
        #expect(distinct.count == groups.count + 3)
    }
}

@Suite struct Decimal128CodableTests {
    @Test func codableRoundTrip() throws {
        let values = [
            "1.10", "-0", "1E-6176", "9.999999999999999999999999999999999E+6144", "NaN", "-Inf", "0.3333333333333333333333333333333333",
        ]
        .map(dec)
        let data = try JSONEncoder().encode(values)
        #expect(
            String(decoding: data, as: UTF8.self)
                == #"["1.10","-0","1E-6176","9.999999999999999999999999999999999E+6144","NaN","-Inf","0.3333333333333333333333333333333333"]"#
        )
        let decoded = try JSONDecoder().decode([Decimal128].self, from: data)
        #expect(decoded.map(\.stringValue) == values.map(\.stringValue))
        #expect(zip(decoded, values).allSatisfy { $0.low == $1.low && $0.high == $1.high })
    }

    @Test func decodesNumbers() throws {
        let decoded = try JSONDecoder().decode([Decimal128].self, from: Data(#"[42, -7, 1.5, "3.30"]"#.utf8))
        #expect(decoded.map(\.stringValue) == ["42", "-7", "1.5", "3.30"])
    }

    @Test func rejectsInvalidStrings() {
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode([Decimal128].self, from: Data(#"["one"]"#.utf8))
        }
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode([Decimal128].self, from: Data(#"[true]"#.utf8))
        }
    }
}
